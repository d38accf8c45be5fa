"""Many projects on one service (issue 40): ``--projects`` projects of ``--secrets`` secrets each,
served by one ``manage.py serve`` and one job worker, as users run them.

Prints: the time to sync every project (one async job each); one project's status p50/p99
(``GET /projects/{p}/secrets/{name}/status``, one request at a time); the same project's status
while another project (``big``, ``--big`` secrets) runs a forced sync, beside the same probe with
nothing else running (the host's own noise); a scheduled drift tick over every project (the tick's
``schedules.due`` in its own process, then until every one of its jobs has ended); and the web
workers' peak RSS.

    bench/bench_projects.py [--projects 100] [--secrets 200] [--big 20000] [--requests 400]
                            [--write-runners N] [--database-url postgres://.../empty_database]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import bench_support as b

PACE_S = 0.005


def _setup(root: Path, projects: int, secrets: int, big: int,
           database_url: str | None = None) -> tuple[dict[str, str], list[str]]:
    (root / "default").mkdir()
    b.write_definition(root / "default", secrets)
    env = b.service_env(root / "default", root / "data")
    if database_url:  # an empty database of the operator's (PostgreSQL): the service's, not SQLite
        env["DATABASE_URL"] = database_url
        (root / "data").mkdir(mode=0o700)  # no SQLite file to create it
    env.pop("SERVICE_LOCKFILE")  # every project's lockfile beside its definition
    env["SERVICE_JOBS_PER_KEY"] = str(projects + 10)
    env["SERVICE_JOBS_MAX"] = str(projects + 20)
    b.migrate(env)
    names = [f"p{i:03d}" for i in range(projects)]
    for name in (*names, "big"):
        (root / name).mkdir()
        b.write_definition(root / name, big if name == "big" else secrets)
    script = ("from projects import registry\n"
              f"for name in {[*names, 'big']!r}:\n"
              f"    registry.add(name, {str(root)!r} + '/' + name + '/Secretfile.yml', actor='bench')\n")
    subprocess.run([b.PYTHON, "manage.py", "shell", "-c", script], cwd=b.ROOT, env=env, check=True, timeout=300)
    return env, names


def _wait_jobs(port: int, ids: list[str], limit_s: float = 1800) -> None:
    deadline = time.monotonic() + limit_s
    left = set(ids)
    while left and time.monotonic() < deadline:
        for job in list(left):
            status, body = b.request(port, "GET", f"/jobs/{job}")
            state = json.loads(body)["state"] if status == 200 else "missing"
            if state in ("succeeded", "failed", "cancelled"):
                if state != "succeeded":
                    raise RuntimeError(f"job {job} ended {state}: {body[:300]!r}")
                left.discard(job)
        time.sleep(0.2)
    if left:
        raise RuntimeError(f"{len(left)} jobs still running")


def _sync_all(port: int, names: list[str]) -> float:
    started = time.perf_counter()
    ids = []
    for name in names:
        status, body = b.request(port, "POST", f"/projects/{name}/sync", {"async": True})
        if status != 202:
            raise RuntimeError(f"sync of {name}: HTTP {status} {body[:300]!r}")
        ids.append(json.loads(body)["id"])
    _wait_jobs(port, ids)
    return time.perf_counter() - started


def _probe(port: int, path: str, stop: threading.Event, out: list[float], failures: list[int]) -> None:
    for _ in range(200_000):
        if stop.is_set():
            return
        started = time.perf_counter()
        status, _ = b.request(port, "GET", path)
        if status != 200:
            failures.append(status)
        out.append((time.perf_counter() - started) * 1000)
        time.sleep(max(0.0, PACE_S - (time.perf_counter() - started)))


def _status_alone(port: int, path: str, requests: int) -> dict[str, float]:
    latencies = []
    for _ in range(requests):
        started = time.perf_counter()
        status, body = b.request(port, "GET", path)
        if status != 200:
            raise RuntimeError(f"{path}: HTTP {status} {body[:300]!r}")
        latencies.append((time.perf_counter() - started) * 1000)
    return {**b.percentiles(latencies), "max_ms": max(latencies), "n": len(latencies)}


def _small_sync(port: int, project: str, out: dict[str, float]) -> None:
    started = time.perf_counter()
    status, body = b.request(port, "POST", f"/projects/{project}/sync", {"force": True, "async": True})
    if status != 202:
        raise RuntimeError(f"{project}'s sync: HTTP {status} {body[:300]!r}")
    _wait_jobs(port, [json.loads(body)["id"]])
    out["small_sync_s"] = time.perf_counter() - started


def _status_during_big_sync(port: int, path: str, small: str) -> dict[str, float]:
    """The status probe during big's forced sync, beside a ``/health`` probe (no project, no
    lockfile: what the host's CPU alone costs a request then); 1 s into it, a forced sync of
    ``small`` (another project), timed until its job has ended."""
    stop = threading.Event()
    during: list[float] = []
    health: list[float] = []
    failures: list[int] = []
    probes = [threading.Thread(target=_probe, args=(port, probed, stop, out, failures))
              for probed, out in ((path, during), ("/health", health))]
    for probe in probes:
        probe.start()
    try:
        started = time.perf_counter()
        status, body = b.request(port, "POST", "/projects/big/sync", {"force": True, "async": True})
        if status != 202:
            raise RuntimeError(f"big's sync: HTTP {status} {body[:300]!r}")
        time.sleep(1.0)
        small_figures: dict[str, float] = {}
        small_sync = threading.Thread(target=_small_sync, args=(port, small, small_figures))
        small_sync.start()
        _wait_jobs(port, [json.loads(body)["id"]])
        sync_s = time.perf_counter() - started
        small_sync.join(1800)
    finally:
        stop.set()
        for probe in probes:
            probe.join(60)
    if failures:
        raise RuntimeError(f"the probes answered {sorted(set(failures))} during the sync")
    return {"sync_s": sync_s, **b.percentiles(during), "max_ms": max(during), "n": len(during),
            "mean_ms": statistics.fmean(during), "health_p99_ms": b.percentiles(health)["p99_ms"],
            "health_p50_ms": b.percentiles(health)["p50_ms"], "small_sync_s": small_figures["small_sync_s"]}


def _tick(env: dict[str, str], port: int) -> dict[str, float]:
    script = ("import time, json\n"
              "from datetime import timedelta\n"
              "from django.utils import timezone\n"
              "from jobs import schedules\n"
              "from jobs.models import Schedule\n"
              "from secretsapi import operations\n"
              "schedules.install()\n"
              "Schedule.objects.filter(name='drift').update(last_tick=timezone.now() - timedelta(days=2))\n"
              "started = time.perf_counter()\n"
              "queued = schedules.due(operations.enqueue)\n"
              "print(json.dumps({'queued': queued, 'enqueue_s': time.perf_counter() - started}))\n")
    began = time.perf_counter()
    done = subprocess.run([b.PYTHON, "manage.py", "shell", "-c", script], cwd=b.ROOT, env=env, check=True,
                          timeout=300, capture_output=True, text=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    _, body = b.request(port, "GET", "/jobs?operation=check_drift&limit=1000")
    ids = [job["id"] for job in json.loads(body)["jobs"] if job["actor"] == "scheduler"]
    _wait_jobs(port, ids)
    return {"jobs": len(ids), "enqueue_s": figures["enqueue_s"], "all_done_s": time.perf_counter() - began}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=100)
    parser.add_argument("--secrets", type=int, default=200)
    parser.add_argument("--big", type=int, default=20000)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--write-runners", type=int,
                        help="SERVICE_JOB_WRITE_WORKERS (SERVICE_JOB_WORKERS is this + 1); default: the "
                             "service's defaults (2 write runners of 3).")
    parser.add_argument("--worker-nice", type=int,
                        help="SERVICE_WORKER_NICE for the job worker (default: the service's, 10); 0 to compare "
                             "with a worker at the web workers' priority.")
    parser.add_argument("--database-url", help="An empty database for the service (DATABASE_URL); default: SQLite.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-projects-") as tmp:
        root = Path(tmp)
        env, names = _setup(root, args.projects, args.secrets, args.big, args.database_url)
        if args.write_runners is not None:
            env.update(SERVICE_JOB_WRITE_WORKERS=str(args.write_runners),
                       SERVICE_JOB_WORKERS=str(args.write_runners + 1))
        if args.worker_nice is not None:
            env["SERVICE_WORKER_NICE"] = str(args.worker_nice)
        server = b.Server(env, args.workers)
        server.start(timeout=120)
        try:
            results: dict[str, Any] = {"load_before": Path("/proc/loadavg").read_text().split()[:3]}
            results["sync_all_s"] = _sync_all(server.port, [*names, "big"])
            path = f"/projects/{names[len(names) // 2]}/secrets/s00100/status"
            results["status_alone"] = _status_alone(server.port, path, args.requests)
            results["status_during_big_sync"] = _status_during_big_sync(server.port, path, names[0])
            results["tick"] = _tick(env, server.port)
            results["web_worker_peak_mb"] = server.peak_rss_mb()
            results["load_after"] = Path("/proc/loadavg").read_text().split()[:3]
        finally:
            server.stop()
    alone, during, tick = results["status_alone"], results["status_during_big_sync"], results["tick"]
    database = "PostgreSQL" if args.database_url else "SQLite"
    print(f"{args.projects} projects x {args.secrets} secrets, + 'big' ({args.big}), {args.workers} web workers, "
          f"{database}, worker nice {args.worker_nice if args.worker_nice is not None else 'default (10)'}; "
          f"load {' '.join(results['load_before'])} -> {' '.join(results['load_after'])}")
    print(f"sync every project (one async job each):      {results['sync_all_s']:8.1f} s")
    print(f"one project's status, alone ({alone['n']} requests):   p50 {alone['p50_ms']:6.2f} ms  "
          f"p99 {alone['p99_ms']:6.2f} ms  max {alone['max_ms']:6.2f} ms")
    print(f"the same during big's forced sync ({during['sync_s']:.1f} s, {during['n']} probes): "
          f"p50 {during['p50_ms']:6.2f} ms  p99 {during['p99_ms']:6.2f} ms  max {during['max_ms']:6.2f} ms")
    print(f"  a forced sync of {names[0]} ({args.secrets}) sent 1 s into it: {during['small_sync_s']:.1f} s "
          f"until its job ended ({args.write_runners or 'the default 2'} write runner(s))")
    print(f"  /health beside it (no project, no lockfile):    p50 {during['health_p50_ms']:6.2f} ms  "
          f"p99 {during['health_p99_ms']:6.2f} ms")
    print(f"scheduled drift tick: {tick['jobs']} jobs queued in {tick['enqueue_s']:.2f} s, all ended in "
          f"{tick['all_done_s']:.1f} s")
    print(f"web workers' peak RSS: {', '.join(f'{mb:.0f} MB' for mb in results['web_worker_peak_mb'])}")


if __name__ == "__main__":
    main()
