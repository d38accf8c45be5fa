"""Jobs without a toll: short operations' latency, and a cold server's first 5,000-secret sync.

For each checkout given (default: this one), against a real `manage.py serve` (2 workers) and a
real `manage.py worker`, each started fresh and waited for until /health answers (and, where it
says so, counts the worker):

1. short operations, on a one-secret definition: the first `POST /config/validate` of a
   one-secret definition after start, then ``--requests`` sequential ones (p50, p99), and as
   many `POST /drift/check` of that one secret (after a sync);
2. a cold server's first sync of ``--size`` secrets: a fresh data folder, the definition written
   before the server starts, one `POST /sync`; meanwhile a thread sends `GET /health` one after
   another, each on a new connection (p50, p99, max). ``--runs`` fresh servers, medians; the
   checkouts take turns run by run (interleaved), each run with the host's load average;
3. with ``--secretzero PATH`` (SecretZero's ``secretzero`` command): ``secretzero sync`` of the
   same definition in a fresh folder, in the first ``--secretzero-runs`` runs (all by default),
   taking turns with the others; wall and CPU seconds, and the ratio of the medians to each
   checkout's cold sync (at 5,000 secrets it takes minutes on a loaded host).

    .venv/bin/python bench/bench_short_ops.py [--checkout /work/main] [--checkout .] [--size 5000]
        [--secretzero ~/.cache/secretzero-0.14.23/bin/secretzero [--secretzero-runs 1]]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import bench_support as b

ONE = {"version": "1.0", "secrets": [{"name": "one", "kind": "random_password", "config": {"length": 24},
                                      "rotation_period": "30d", "targets": [{"provider": "local", "kind": "file",
                                      "config": {"path": "out/one.env", "format": "dotenv"}}]}]}


class Instance:
    def __init__(self, checkout: Path, folder: Path, data: Path) -> None:
        self.checkout, self.folder, self.data = checkout, folder, data
        self.python = str(checkout / ".venv" / "bin" / "python")
        self.env = b.service_env(folder, data)
        self.port = b.free_port()
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        log = open(self.data / "serve.log", "ab")  # noqa: SIM115 - the children keep it
        serve = [self.python, "manage.py", "serve", "--workers", "2", "--port", str(self.port)]
        if '"--worker",' in (self.checkout / "secretsapi/management/commands/serve.py").read_text():
            serve += ["--worker", "no"]
        subprocess.run([self.python, "manage.py", "migrate", "-v", "0"], cwd=self.checkout, env=self.env,
                       check=True, timeout=300)
        self.procs.append(subprocess.Popen(serve, cwd=self.checkout, env=self.env, stdout=log, stderr=log))
        self.procs.append(subprocess.Popen([self.python, "manage.py", "worker"], cwd=self.checkout, env=self.env,
                                           stdout=log, stderr=log))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                status, body = b.request(self.port, "GET", "/health")
                if status == 200 and json.loads(body).get("workers", "up") == "up":
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("the server did not start")
        time.sleep(2)  # a ready worker: its start-up done, waiting for jobs

    def stop(self) -> None:
        for proc in self.procs:
            proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()


def _ms(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {"p50": statistics.median(values) * 1000, "p99": values[int(0.99 * (len(values) - 1))] * 1000,
            "max": values[-1] * 1000}


def short_ops(checkout: Path, tmp: Path, requests: int) -> dict[str, Any]:
    folder, data = tmp / "short", tmp / "short-data"
    for d in (folder, data):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
    (folder / "out").mkdir()
    (folder / "Secretfile.yml").write_text(json.dumps(ONE))
    instance = Instance(checkout, folder, data)
    instance.start()
    try:
        first = b.timed(instance.port, "POST", "/config/validate", {"config": ONE})
        validate = [b.timed(instance.port, "POST", "/config/validate", {"config": ONE}) for _ in range(requests)]
        b.timed(instance.port, "POST", "/sync", {})
        first_drift = b.timed(instance.port, "POST", "/drift/check", {"secret_name": "one"})
        drift = [b.timed(instance.port, "POST", "/drift/check", {"secret_name": "one"}) for _ in range(requests)]
    finally:
        instance.stop()
    return {"validate_first_ms": first * 1000, "validate": _ms(validate), "drift_first_ms": first_drift * 1000,
            "drift": _ms(drift)}


def _health_probe(port: int, stop: threading.Event, seen: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", "/health")
            conn.getresponse().read()
        finally:
            conn.close()
        seen.append(time.perf_counter() - started)
        time.sleep(0.005)


def cold_sync(checkout: Path, tmp: Path, size: int) -> dict[str, Any]:
    folder, data = tmp / "cold", tmp / "cold-data"
    for d in (folder, data):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
    b.write_definition(folder, size)
    instance = Instance(checkout, folder, data)
    instance.start()
    seen: list[float] = []
    stop = threading.Event()
    probe = threading.Thread(target=_health_probe, args=(instance.port, stop, seen))
    try:
        probe.start()
        took = b.timed(instance.port, "POST", "/sync", {})
    finally:
        stop.set()
        probe.join(30)
        instance.stop()
    return {"sync_s": took, "health": _ms(seen), "probes": len(seen), "load": os.getloadavg()[0]}


def secretzero_sync(command: str, tmp: Path, size: int) -> dict[str, Any]:
    """``secretzero sync`` of the same definition in a fresh folder: wall and CPU seconds."""
    folder = tmp / "secretzero"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    b.write_definition(folder, size)
    before = os.times()
    started = time.perf_counter()
    subprocess.run([command, "sync", "-f", "Secretfile.yml"], cwd=folder, check=True, timeout=1800,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.perf_counter() - started
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"sync_s": took, "cpu_s": cpu, "load": os.getloadavg()[0]}


def _joined(values: Any, digits: int = 1) -> str:
    return ", ".join(f"{value:.{digits}f}" for value in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", action="append", type=Path)
    parser.add_argument("--size", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--secretzero", help="SecretZero's `secretzero` command: time its sync of the same definition")
    parser.add_argument("--secretzero-runs", type=int, help="how many of the runs include SecretZero's (all)")
    args = parser.parse_args()
    checkouts = [c.resolve() for c in (args.checkout or [b.ROOT])]
    tmp = Path(tempfile.mkdtemp(prefix="secrets-bench-short-"))
    os.chmod(tmp, 0o700)
    figures: dict[str, Any] = {}
    secretzero: list[dict[str, Any]] = []
    try:
        for checkout in checkouts:
            figures[str(checkout)] = {"short": short_ops(checkout, tmp, args.requests), "cold": []}
        for run in range(args.runs):  # interleaved: each run of each, in turn, on the same host
            for checkout in checkouts:
                figures[str(checkout)]["cold"].append(cold_sync(checkout, tmp, args.size))
            if args.secretzero and run < (args.secretzero_runs or args.runs):
                secretzero.append(secretzero_sync(args.secretzero, tmp, args.size))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({**figures, "secretzero": secretzero}, indent=2))
    for key, f in figures.items():
        s = f["short"]
        print(f"{key}")
        print(f"  POST /config/validate (1 secret): first {s['validate_first_ms']:.1f} ms, "
              f"p50 {s['validate']['p50']:.1f} ms, p99 {s['validate']['p99']:.1f} ms")
        print(f"  POST /drift/check (1 secret):     first {s['drift_first_ms']:.1f} ms, "
              f"p50 {s['drift']['p50']:.1f} ms, p99 {s['drift']['p99']:.1f} ms")
        syncs = [r["sync_s"] for r in f["cold"]]
        health = [r["health"] for r in f["cold"]]
        print(f"  cold server, first POST /sync ({args.size}): median {statistics.median(syncs):.2f} s "
              f"(runs {', '.join(f'{x:.2f}' for x in syncs)}); /health during it: p50 "
              f"{statistics.median(h['p50'] for h in health):.1f} ms, p99 "
              f"{statistics.median(h['p99'] for h in health):.1f} ms, max {max(h['max'] for h in health):.1f} ms; "
              f"load {_joined(r['load'] for r in f['cold'])}")
    if secretzero:
        walls = [r["sync_s"] for r in secretzero]
        print(f"secretzero sync ({args.size}): median {statistics.median(walls):.2f} s (runs "
              f"{_joined(walls, 2)}; CPU {_joined((r['cpu_s'] for r in secretzero), 2)} s; "
              f"load {_joined(r['load'] for r in secretzero)})")
        for key, f in figures.items():
            ours = statistics.median(r["sync_s"] for r in f["cold"])
            print(f"  {key}: {statistics.median(walls) / ours:.1f}x faster than SecretZero (medians)")


if __name__ == "__main__":
    main()
