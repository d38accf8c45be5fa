"""Jobs: enqueue-to-start latency on an idle worker, and what a scheduler tick costs.

1. Enqueue to start: ``N`` policy checks of a 10-secret definition, one at a time (each waits
   for the previous one to end, so the worker is idle when the next is queued), against a real
   ``manage.py worker``; the latency is the job's ``started_at - created_at`` (one host, one
   clock). On the embedded default (SQLite), and on PostgreSQL when ``--postgres URL`` names a
   server where the role may create databases (a fresh one is made and dropped).
2. A tick with nothing due, on 20,000 secrets (all generated just now): the scheduler's pass
   when no schedule is due (what every worker runs every heartbeat), and a scheduled rotation
   run when no secret is due (what an hourly tick costs), in-process.

    .venv/bin/python bench/bench_jobs.py [--jobs 200] [--postgres postgres://...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import bench_support as b

LATENCY = """
import json, statistics, time
from secretsapi import operations
from jobs import workers
while not workers.alive():
    time.sleep(0.1)
payload = {"fail_on_warning": False, "var_files": []}
operations.wait(operations.submit("check_policy", payload, actor="bench"), 60)  # the worker has started
ms = []
for _ in range(%(jobs)d):
    job = operations.wait(operations.submit("check_policy", payload, actor="bench"), 60)
    assert job.state == "succeeded", job.state
    ms.append((job.started_at - job.created_at).total_seconds() * 1000)
ms.sort()
print(json.dumps({"jobs": len(ms), "p50_ms": statistics.median(ms), "p99_ms": ms[int(0.99 * (len(ms) - 1))],
                  "max_ms": ms[-1]}))
"""

TICK = """
import json, statistics, time
from jobs import schedules
from secretsapi import operations
from secretsapi.actions import workspaces, writes
writes.sync(workspaces.workspace(), actor="bench")
schedules.install()  # the latest ticks count as run: nothing is due
passes = []
for _ in range(50):
    started = time.perf_counter()
    assert schedules.due(operations.enqueue) == []
    passes.append((time.perf_counter() - started) * 1000)
rotations = []
for _ in range(%(runs)d):
    started = time.perf_counter()
    result = operations.run_inline("execute_rotation", {"secret_name": None, "force": False, "var_files": []},
                                   actor="scheduler")
    rotations.append(time.perf_counter() - started)
    assert result.rotated == [], "something was due"
print(json.dumps({"scheduler_pass_ms": statistics.median(passes),
                  "rotation_nothing_due_s": statistics.median(rotations), "runs": len(rotations)}))
"""


def shell(env: dict[str, str], code: str, timeout: float = 900) -> dict[str, Any]:
    out = subprocess.run([b.PYTHON, "manage.py", "shell", "-c", code], cwd=b.ROOT, env=env, capture_output=True,
                         text=True, timeout=timeout, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def latency(tmp: Path, label: str, jobs: int, database_url: str | None) -> dict[str, Any]:
    folder, data = tmp / label, tmp / f"{label}-data"
    folder.mkdir()
    data.mkdir()
    b.write_definition(folder, 10)
    env = b.service_env(folder, data)
    if database_url:
        env["DATABASE_URL"] = database_url
    b.migrate(env)
    log = open(data / "worker.log", "ab")  # noqa: SIM115 - the child keeps it
    worker = subprocess.Popen([b.PYTHON, "manage.py", "worker"], cwd=b.ROOT, env=env, stdout=log, stderr=log)
    try:
        return shell(env, LATENCY % {"jobs": jobs})
    finally:
        worker.terminate()
        worker.wait(timeout=60)


def tick(tmp: Path, size: int, runs: int) -> dict[str, Any]:
    folder, data = tmp / "tick", tmp / "tick-data"
    folder.mkdir()
    data.mkdir()
    b.write_definition(folder, size)
    env = b.service_env(folder, data)
    b.migrate(env)
    return shell(env, TICK % {"runs": runs})


def fresh_postgres(admin: str) -> tuple[str, str]:
    import psycopg

    name = f"secretsapi_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(admin)._replace(path="/" + name)), name


def drop_postgres(admin: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--postgres", help="a PostgreSQL URL whose role may create databases")
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="secrets-bench-jobs-"))
    figures: dict[str, Any] = {}
    started = time.monotonic()
    try:
        figures["sqlite"] = latency(tmp, "sqlite", args.jobs, None)
        if args.postgres:
            url, name = fresh_postgres(args.postgres)
            try:
                figures["postgresql"] = latency(tmp, "postgresql", args.jobs, url)
            finally:
                drop_postgres(args.postgres, name)
        figures["tick"] = tick(tmp, args.size, args.runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(figures, indent=2))
    print(f"{'enqueue -> start, idle worker':<40} {'jobs':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for backend in ("sqlite", "postgresql"):
        if backend in figures:
            f = figures[backend]
            print(f"{backend:<40} {f['jobs']:>6} {f['p50_ms']:>8.1f} {f['p99_ms']:>8.1f} {f['max_ms']:>8.1f}")
    t = figures["tick"]
    print(f"scheduler pass, nothing due: {t['scheduler_pass_ms']:.2f} ms; scheduled rotation of {args.size} "
          f"secrets, nothing due: {t['rotation_nothing_due_s']:.2f} s (median of {t['runs']})")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
