"""The storage plumbing against the standard parts, on the same work, in-process.

For each ``--checkout`` (a checkout's own code, run by this venv's Python in a child process):
- audit: ``audit.recorder.record()`` into one SQLite file, alone, then from 3 processes of 4
  threads at once (rows/s, p50 and p99 of one call, rows lost, errors), with the recorder's
  write gate and, where the checkout has one, without it (SQLite's busy timeout alone);
- keys: ``apikeys.keys.resolve()`` of a named key (median µs);
- lockfile: ``read_lockfile`` of a 20,000-entry lockfile, not cached (median ms), and the longest
  another thread of the process waited meanwhile (a thread that wakes every 0.5 ms);
- definition (``--definition``): ``load_yaml`` of a 20,000-secret definition with the one-pass
  event loader, with the C loader's composed path that keeps the same bounds
  (``yaml.CSafeLoader`` subclass, ``_STREAM`` off), and a bare ``yaml.load`` with that loader;
  then a first sync of those secrets in-process (definition just changed) with each.

Run: ``.venv/bin/python bench/bench_storage.py --checkout /work/main --checkout . --definition``
(~3 minutes on 2 cores). Nothing here is collected by pytest.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
PYTHON = str(HERE.parent.parent / ".venv" / "bin" / "python")
PROCESSES, THREADS, CALLS = 3, 4, 150
SOLO_CALLS = 500
SECRETS = 20_000


def _setup(checkout: Path, data: Path) -> None:
    """Django of ``checkout`` against an SQLite file in ``data``, migrated."""
    os.chdir(checkout)
    sys.path.insert(0, str(checkout))
    os.environ.update(DATABASE_URL=f"sqlite:///{data / 'service.sqlite3'}", SERVICE_DATA_DIR=str(data),
                      DJANGO_SETTINGS_MODULE="project.settings", SERVICE_SECRET_KEY="bench-" + "x" * 50)
    os.environ.pop("SERVICE_API_KEY", None)
    import django

    django.setup()


def _writer(checkout: Path, data: Path, gate: str) -> None:
    """One of the concurrent writer processes: THREADS threads of CALLS records; prints timings.
    ``gate`` "off": the recorder's SQLite write gate is replaced by nothing (SQLite's own waiting)."""
    _setup(checkout, data)
    from django.db import connection

    from audit import recorder
    from audit.recorder import record

    if gate == "off":
        recorder.audit_write_gate = contextlib.nullcontext  # type: ignore[attr-defined]

    times: list[float] = []
    errors: list[str] = []

    def work(t: int) -> None:
        try:
            for i in range(CALLS):
                started = time.perf_counter()
                record(action="get_secret_status", resource=f"secret:s{i:05d}", user=f"w{os.getpid()}t{t}",
                       success=True)
                times.append(time.perf_counter() - started)
        except Exception as exc:  # reported, counted as lost rows
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    sys.stdin.readline()  # every process starts together
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    print(json.dumps({"times": times, "errors": errors}))


def _audit(checkout: Path, data: Path) -> dict[str, Any]:
    from django.core.management import call_command

    from audit import recorder
    from audit.recorder import record

    call_command("migrate", verbosity=0)
    solo = []
    for i in range(SOLO_CALLS):
        started = time.perf_counter()
        record(action="get_secret_status", resource=f"secret:s{i:05d}", user="service", success=True)
        solo.append(time.perf_counter() - started)
    figures: dict[str, Any] = {"solo_ms": statistics.median(solo) * 1000}
    for gate in ("on", "off") if hasattr(recorder, "audit_write_gate") else ("none",):
        figures[f"gate_{gate}"] = _concurrent(checkout, data, gate)
    return figures


def _concurrent(checkout: Path, data: Path, gate: str) -> dict[str, Any]:
    from audit.models import AuditEntry

    before = AuditEntry.objects.count()
    procs = [subprocess.Popen([PYTHON, str(HERE), "--writer", str(checkout), str(data), gate],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(PROCESSES)]
    time.sleep(3)  # their Django set up
    started = time.perf_counter()
    outs = []
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        outs.append(json.loads(out.strip().splitlines()[-1]))
    wall = time.perf_counter() - started
    times = sorted(t for out in outs for t in out["times"])
    written = AuditEntry.objects.count() - before
    return {"rows_per_s": written / wall,
            "p50_ms": times[len(times) // 2] * 1000, "p99_ms": times[int(len(times) * 0.99)] * 1000,
            "lost": PROCESSES * THREADS * CALLS - written, "errors": sum(len(out["errors"]) for out in outs)}


def _keys() -> dict[str, Any]:
    from apikeys import keys

    issued = keys.create("bench", ["read"], actor="bench")
    keys.resolve(issued.key)
    times = []
    for _ in range(2000):
        started = time.perf_counter()
        keys.resolve(issued.key)
        times.append(time.perf_counter() - started)
    return {"resolve_us": statistics.median(times) * 1e6}


def _lockfile(data: Path) -> dict[str, Any]:
    from secretsapi.service.state.lockfile import LockDocument
    from secretsapi.service.state.lockfile_io import read_lockfile, write_lockfile

    digest = "d" * 64
    raw = {"version": "1.0", "metadata": {"generated_by": "bench"},
           "secretfile": {"filename": "Secretfile.yml", "var_files": []},
           "secrets": {f"s{i:05d}": {"hash": digest, "created_at": "2026-11-26T12:00:00+00:00",
                                      "updated_at": "2026-11-26T12:00:00+00:00", "rotation_count": 0,
                                      "targets": {f"local/file/out/f{i % 20:02d}.env": digest}}
                       for i in range(SECRETS)}}
    source = data / "written.lock"
    write_lockfile(source, LockDocument(raw))
    durations, stalls = [], []
    for run in range(7):
        path = data / f"copy{run}.lock"  # a path never read before: parsed, not cached
        shutil.copyfile(source, path)
        stop = threading.Event()
        gaps: list[float] = []

        def probe(stop: threading.Event = stop, gaps: list[float] = gaps) -> None:
            last = time.perf_counter()
            while not stop.is_set():
                time.sleep(0.0005)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        thread = threading.Thread(target=probe)
        thread.start()
        time.sleep(0.01)
        started = time.perf_counter()
        doc = read_lockfile(path)
        durations.append(time.perf_counter() - started)
        stop.set()
        thread.join()
        stalls.append(max(gaps))
        assert len(doc._raw["secrets"]) == SECRETS
    return {"bytes": source.stat().st_size, "read_ms": statistics.median(durations) * 1000,
            "stall_ms": statistics.median(stalls) * 1000, "stall_max_ms": max(stalls) * 1000}


def _definition(data: Path) -> dict[str, Any]:
    sys.path.insert(0, str(HERE.parent))
    import bench_support as b
    import yaml

    from secretsapi.service import sync
    from secretsapi.service.definition import yaml_loader
    from secretsapi.service.loading.loader import clear_definition_cache
    from secretsapi.service.workspace import Workspace

    folder = data / "definition"
    folder.mkdir()
    path = b.write_definition(folder, SECRETS)
    text = path.read_text()
    stream = yaml_loader._STREAM
    out: dict[str, Any] = {}

    def timed(fn: Any, runs: int = 3) -> float:
        best = float("inf")
        for _ in range(runs):
            started = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - started)
        return best

    out["events_s"] = timed(lambda: yaml_loader.load_yaml(text, source="x"))
    out["bare_cloader_s"] = timed(lambda: yaml.load(text, Loader=yaml_loader._BoundedCLoader))  # noqa: S506 - a CSafeLoader subclass
    yaml_loader._STREAM = None
    try:
        out["cloader_s"] = timed(lambda: yaml_loader.load_yaml(text, source="x"))
    finally:
        yaml_loader._STREAM = stream
    for name, loader in (("sync_events_s", stream), ("sync_cloader_s", None)):
        yaml_loader._STREAM = loader
        runs = []
        try:
            for _ in range(2):
                b.reset_state(folder)
                clear_definition_cache()
                started = time.perf_counter()
                result = sync(Workspace(path))
                runs.append(time.perf_counter() - started)
                assert len(result.secrets_generated) == SECRETS
        finally:
            yaml_loader._STREAM = stream
        out[name] = min(runs)
    return out


def _measure(checkout: Path, sections: list[str]) -> None:
    data = Path(tempfile.mkdtemp(prefix="bench-storage-"))
    try:
        _setup(checkout, data)
        figures: dict[str, Any] = {}
        if "audit" in sections:
            figures["audit"] = _audit(checkout, data)
            figures["keys"] = _keys()
        if "lockfile" in sections:
            figures["lockfile"] = _lockfile(data)
        if "definition" in sections:
            figures["definition"] = _definition(data)
        print(json.dumps(figures))
    finally:
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    if sys.argv[1:2] == ["--writer"]:
        _writer(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
        return
    if sys.argv[1:2] == ["--measure"]:
        _measure(Path(sys.argv[2]), sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", action="append", type=Path, required=True)
    parser.add_argument("--definition", action="store_true", help="also the definition loaders (first checkout)")
    args = parser.parse_args()
    for index, checkout in enumerate(args.checkout):
        sections = ["audit", "lockfile", *(["definition"] if args.definition and index == 0 else [])]
        out = subprocess.run([PYTHON, str(HERE), "--measure", str(checkout.resolve()), *sections],
                             capture_output=True, text=True, timeout=1200, check=False)
        if out.returncode:
            sys.exit(f"{checkout}: {out.stderr[-3000:]}")
        figures = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"== {checkout} ({_commit(checkout)})")
        audit, keys, lock = figures["audit"], figures["keys"], figures["lockfile"]
        print(f"audit record, alone                    {audit['solo_ms']:8.3f} ms median")
        for gate in ("on", "off", "none"):
            if f"gate_{gate}" in audit:
                many = audit[f"gate_{gate}"]
                print(f"audit record, {PROCESSES} processes x {THREADS} threads, write gate {gate:4} "
                      f"{many['rows_per_s']:6.0f} rows/s, p50 {many['p50_ms']:.2f} ms, p99 {many['p99_ms']:.2f} ms, "
                      f"lost {many['lost']}, errors {many['errors']}")
        print(f"key resolve                            {keys['resolve_us']:8.0f} us median")
        print(f"lockfile read, {SECRETS} entries ({lock['bytes'] / 1e6:.1f} MB) {lock['read_ms']:8.1f} ms median, "
              f"longest wait of another thread {lock['stall_ms']:.1f} ms median (max {lock['stall_max_ms']:.1f})")
        if "definition" in figures:
            d = figures["definition"]
            print(f"definition parse, {SECRETS} secrets: events {d['events_s']:.2f} s, "
                  f"C loader with the bounds {d['cloader_s']:.2f} s, bare yaml.load(CSafeLoader) "
                  f"{d['bare_cloader_s']:.2f} s")
            print(f"first sync of {SECRETS} (definition just changed): events {d['sync_events_s']:.2f} s, "
                  f"C loader {d['sync_cloader_s']:.2f} s")


def _commit(checkout: Path) -> str:
    return subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip()


if __name__ == "__main__":
    main()
