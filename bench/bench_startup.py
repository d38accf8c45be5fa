"""What a process of this service costs to start, in CPU-seconds (user + system, the operating
system's own accounting): ``secretsctl --help``, ``validate`` and ``status`` of the example
definition (local mode, from a copy in a temporary folder), ``manage.py check``, a gunicorn
worker's boot (``manage.py serve --worker no`` until ``/health`` answers, every process of the
group counted), the same with the job worker serve starts (``--worker yes``, until it says "Job
worker ready" too) and ``manage.py worker`` until it says "Job worker ready".

Each figure is the median of ``--runs`` runs (default 5, after one not counted), min and max
beside it; ``--vs OTHER_CHECKOUT`` runs another checkout's code in turn with this one's. The database is
migrated once before, in a temporary data folder, so no run migrates, and the definition synced
once, so ``status`` reads 20 generated secrets. Run:
``.venv/bin/python bench/bench_startup.py [--runs 5] [--vs /tmp/old]``
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"
PYTHON = str(BIN / "python") if (BIN / "python").exists() else sys.executable
TICK = os.sysconf("SC_CLK_TCK")
BOOT_SECONDS = 60  # bound on one server's or worker's start


def _rusage_cpu(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """CPU-seconds of one command run to its end (its waited-for children included)."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def _group_cpu(pgid: int) -> float:
    """CPU-seconds so far of every live process in the group, and of the children they reaped."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the name: state ppid pgrp ...
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / TICK


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _health(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", "/health")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


def _until(argv: list[str], cwd: Path, env: dict[str, str], ready: Callable[[Path], bool]) -> float:
    """CPU-seconds of a long-running process group from its start until ``ready`` (given the file
    its output goes to); then the group is stopped."""
    log = Path(env["SERVICE_DATA_DIR"]).parent / "output.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + BOOT_SECONDS
        while not ready(log):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{' '.join(argv)} did not get ready")
            time.sleep(0.02)
        return _group_cpu(proc.pid)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _said(text: bytes) -> Callable[[Path], bool]:
    return lambda log: text in log.read_bytes()


def cases(root: Path, work: Path, env: dict[str, str], port: int) -> list[tuple[str, Callable[[], float]]]:
    """The figures of the checkout at ``root`` (its modules first on the path, its manage.py)."""
    env = {**env, "PYTHONPATH": str(root)}
    cli = [PYTHON, "-m", "secretsapi.cli"]  # the console script's code, from this checkout
    manage = [PYTHON, str(root / "manage.py")]
    serve = [*manage, "serve", "--port", str(port), "--workers", "1", "--worker", "no"]
    return [
        ("secretsctl --help", lambda: _rusage_cpu([*cli, "--help"], work, env)),
        ("secretsctl validate -f Secretfile.yml", lambda: _rusage_cpu([*cli, "validate", "-f", "Secretfile.yml"],
                                                                      work, env)),
        ("secretsctl status -f Secretfile.yml", lambda: _rusage_cpu([*cli, "status", "-f", "Secretfile.yml"],
                                                                    work, env)),
        ("manage.py check", lambda: _rusage_cpu([*manage, "check"], root, env)),
        ("serve: one gunicorn worker until /health", lambda: _until(serve, root, env, lambda _: _health(port))),
        ("serve --worker yes: and its job worker ready", lambda: _until(
            [*serve[:-1], "yes"], root, env, lambda log: _health(port) and b"Job worker ready" in log.read_bytes())),
        ("manage.py worker until ready", lambda: _until([*manage, "worker"], root, env, _said(b"Job worker ready"))),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--vs", type=Path, default=None,
                        help="Another checkout (say `git worktree add /tmp/old <commit>`): its runs alternate "
                             "with this one's, so a shared machine's drift hits both alike.")
    args = parser.parse_args()
    # Stopped with SIGTERM, the server or worker being measured is stopped too (the finally above).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    roots = [ROOT, *([args.vs.resolve()] if args.vs else [])]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copy(ROOT / "examples" / "Secretfile.yml", work / "Secretfile.yml")
        env = {**os.environ, "SERVICE_DATA_DIR": str(work / "data"), "SERVICE_CONFIG": str(work / "Secretfile.yml"),
               "DJANGO_SETTINGS_MODULE": "project.settings"}
        env.pop("DATABASE_URL", None)
        subprocess.run([PYTHON, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        # status then reads 20 generated secrets (the brief's case), and exits 0.
        subprocess.run([PYTHON, "-m", "secretsapi.cli", "-q", "sync"], cwd=work, env={**env, "PYTHONPATH": str(ROOT)},
                       check=True, stdout=subprocess.DEVNULL)
        port = _free_port()
        table = [cases(root, work, env, port) for root in roots]
        heads = "".join(f" {'median':>7} {'min':>6} {'max':>6}" for _ in roots)
        print(f"{'process (CPU-s, ' + str(args.runs) + ' runs)':44}{heads}   ({', '.join(map(str, roots))})")
        for i, (name, _) in enumerate(table[0]):
            figures: list[list[float]] = [[] for _ in roots]
            for _ in range(args.runs + 1):  # the first round warms the caches and is not counted
                for k, per_root in enumerate(table):
                    figures[k].append(per_root[i][1]())
            cells = "".join(f" {statistics.median(f[1:]):7.2f} {min(f[1:]):6.2f} {max(f[1:]):6.2f}" for f in figures)
            print(f"{name:44}{cells}", flush=True)


if __name__ == "__main__":
    main()
