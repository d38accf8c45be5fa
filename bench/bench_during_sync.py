"""Short requests during a long sync: ``/health`` and ``/secrets/{name}/status`` latency while a
forced sync of 20,000 secrets runs (issue 19, point 2), one figure set per run.

Two probe threads, each sending one request at a time every ``PACE_S`` on a new connection (so
the probes land on every worker, the one running the sync included), from when the sync is sent
until ``AFTER_S`` after it answered: the window covers the sync and the first reads of the
lockfile it rewrote. The same probes during ``BEFORE_S`` with nothing else running give the
host's own noise (``idle``), since on a shared machine a probe can wait for a core. Used by
``bench_run.py``; ``main()`` runs an interleaved A/B of two checkouts.
"""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
from typing import Any

import bench_support as b

RUNS = 5
PACE_S = 0.005
BEFORE_S = 1.0
AFTER_S = 1.0
STATUS_PATH = "/secrets/s10000/status"
HEALTH_MAX_MS = 25.0
STATUS_P99_MS = 25.0


def _probe(port: int, path: str, stop: threading.Event, out: list[tuple[float, float]], failures: list[int]) -> None:
    for _ in range(100_000):
        if stop.is_set():
            return
        started = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", path, headers={"X-API-Key": b.API_KEY})
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                failures.append(response.status)
        finally:
            conn.close()
        out.append((started, (time.perf_counter() - started) * 1000))
        time.sleep(max(0.0, PACE_S - (time.perf_counter() - started)))


def one_run(port: int, body: dict[str, Any]) -> dict[str, float]:
    """One sync with both probes around it: the sync's seconds, then max/p99/p50 of each probe."""
    stop = threading.Event()
    health: list[tuple[float, float]] = []
    status: list[tuple[float, float]] = []
    failures: list[int] = []
    probes = [threading.Thread(target=_probe, args=(port, path, stop, out, failures))
              for path, out in (("/health", health), (STATUS_PATH, status))]
    for probe in probes:
        probe.start()
    time.sleep(BEFORE_S)
    sent = time.perf_counter()
    try:
        sync_s = _async_sync(port, body) if body.get("async") else b.timed(port, "POST", "/sync", body)
        time.sleep(AFTER_S)
    finally:
        stop.set()
        for probe in probes:
            probe.join(60)
    if failures:
        raise RuntimeError(f"probes answered {sorted(set(failures))} during the sync")
    idle = [ms for at, ms in health if at < sent]
    during = [ms for at, ms in health if at >= sent]
    reads = [ms for at, ms in status if at >= sent]
    return {"sync_s": sync_s, "health_idle_max_ms": max(idle),
            "health_max_ms": max(during), "health_p99_ms": b.percentiles(during)["p99_ms"],
            "health_samples": len(during),
            "status_max_ms": max(reads), "status_p99_ms": b.percentiles(reads)["p99_ms"],
            "status_p50_ms": statistics.median(reads), "status_samples": len(reads)}


def _async_sync(port: int, body: dict[str, Any]) -> float:
    """``POST /sync`` with ``async``: the seconds until its job has ended (polled every 50 ms)."""
    started = time.perf_counter()
    status, payload = b.request(port, "POST", "/sync", body)
    if status != 202:
        raise RuntimeError(f"POST /sync async: HTTP {status}: {payload[:300]!r}")
    address = "/jobs/" + json.loads(payload)["id"]
    for _ in range(12_000):
        status, payload = b.request(port, "GET", address)
        state = json.loads(payload)["state"]
        if state in ("succeeded", "failed", "cancelled"):
            if state != "succeeded":
                raise RuntimeError(f"the sync's job ended {state}")
            return time.perf_counter() - started
        time.sleep(0.05)
    raise RuntimeError("the sync's job did not end in 10 minutes")


def measure(server: b.Server, runs: int = RUNS, *, run_async: bool = False) -> dict[str, Any]:
    """``runs`` forced syncs of every secret of an instance serving 20,000 (generated already).

    Before each, every worker reads the definition and the lockfile (status under load) and
    every process of the job worker parses the definition (concurrent dry runs), so each run measures a
    sync on a parsed definition, as a deployed service runs it, not a first parse.
    """
    out = []
    for _ in range(runs):
        b.load(server.port, STATUS_PATH, seconds=1, connections=8)
        b.warm_job_workers(server)
        out.append(one_run(server.port, {"force": True, "async": True} if run_async else {"force": True}))
    return {"runs": out}


def table_lines(figures: dict[str, Any]) -> list[str]:
    lines = [f"{'during a forced 20000 sync (per run)':<52} {'sync s':>8} {'health':>8} {'health':>8} "
             f"{'status':>8} {'status':>8} {'idle':>8}",
             f"{'':<52} {'':>8} {'max ms':>8} {'p99 ms':>8} {'p99 ms':>8} {'max ms':>8} {'max ms':>8}"]
    for i, run in enumerate(figures["runs"], 1):
        label = f"run {i} ({run['health_samples']:.0f} + {run['status_samples']:.0f} probes)"
        lines.append(f"{label:<52} "
                     f"{run['sync_s']:>8.2f} {run['health_max_ms']:>8.2f} {run['health_p99_ms']:>8.2f} "
                     f"{run['status_p99_ms']:>8.2f} {run['status_max_ms']:>8.2f} {run['health_idle_max_ms']:>8.2f}")
    return lines


def targets(figures: dict[str, Any] | None) -> list[tuple[str, str, bool | None]]:
    if not figures:
        return [("7. /health max during 20000 sync <= 25 ms, every run", "not measured", None),
                ("7. status p99 during 20000 sync <= 25 ms, every run", "not measured", None)]
    health = max(run["health_max_ms"] for run in figures["runs"])
    status = max(run["status_p99_ms"] for run in figures["runs"])
    return [("7. /health max during 20000 sync <= 25 ms, every run", f"{health:.1f} ms", health <= HEALTH_MAX_MS),
            ("7. status p99 during 20000 sync <= 25 ms, every run", f"{status:.1f} ms", status <= STATUS_P99_MS)]


def main() -> None:
    """A/B: the same runs against served checkouts (``--checkout A --checkout B``), interleaved."""
    import argparse
    import shutil
    import tempfile
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--checkout", action="append", required=True, help="a checkout with its .venv")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--async", dest="run_async", action="store_true",
                        help="send each sync with async: true and poll its job (checkouts that have jobs)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="secrets-bench-ab-"))
    servers = []
    try:
        for i, checkout in enumerate(args.checkout):
            folder, data = tmp / f"def{i}", tmp / f"data{i}"
            folder.mkdir()
            data.mkdir()
            b.write_definition(folder, 20_000)
            env = b.service_env(folder, data)
            b.ROOT, b.PYTHON = Path(checkout), str(Path(checkout) / ".venv" / "bin" / "python")
            b.migrate(env)
            server = b.Server(env, args.workers)
            server.start()
            servers.append((checkout, server))
            b.timed(server.port, "POST", "/sync", {})
        figures: dict[str, list[dict[str, Any]]] = {checkout: [] for checkout, _ in servers}
        for _ in range(args.runs):
            for checkout, server in servers:
                figures[checkout] += measure(server, runs=1, run_async=args.run_async)["runs"]
        for checkout, _ in servers:
            print(checkout)
            print("\n".join(table_lines({"runs": figures[checkout]})))
            for target, figure, met in targets({"runs": figures[checkout]}):
                print(f"{target:<60} {figure:>12}  {'yes' if met else 'NO'}")
    finally:
        for _, server in servers:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
