"""The audit export streams in constant memory: peak RSS of exporting 10,000, 100,000 and 1,000,000 rows.

    .venv/bin/python bench/bench_audit_export.py [--rows 1000000] [--fractions 0.01 0.1 1]

Builds a throwaway SQLite database (migrations applied) and seeds ``--rows`` audit rows with
``bulk_create`` (one second apart). Then, for each fraction, exports the newest rows (``since``
picks them) twice, each time from a fresh process:

- ``GET /audit/logs`` with ``Accept: application/x-ndjson`` from a real ``manage.py serve``
  (gunicorn, one worker) on a loopback port: the body is read as it streams and dropped, and the
  figure is the worker process's peak RSS (``VmHWM`` in ``/proc``) before and after the export;
- ``manage.py audit --format jsonl``, its stdout read from a pipe and dropped: the figure is the
  command's peak RSS (``os.wait4``), beside the same command's with ``--until`` set before the
  first row (its baseline: imports, settings, one empty query).

Constant memory: the peak does not grow with the rows.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.processes.live import free_port, wait_for

SEED = """
import itertools
from datetime import UTC, datetime, timedelta
import django
django.setup()
from audit.models import AuditEntry
rows, base = {rows}, datetime(2026, 1, 1, tzinfo=UTC)
made = (AuditEntry(timestamp=base + timedelta(seconds=i), action="sync", resource=f"secret:s{{i % 500}}",
                   user="service", success=i % 17 != 0,
                   details={{"generated": [f"s{{i % 500}}"], "skipped": [], "failed": [], "errors": []}})
        for i in range(rows))
while batch := list(itertools.islice(made, 20000)):
    AuditEntry.objects.bulk_create(batch)
"""
KEY = "bench-key"
READ = 1 << 16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.01, 0.1, 1.0])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
        env.update({"SERVICE_DATA_DIR": tmp, "SERVICE_API_KEY": KEY,
                    "SERVICE_CONFIG": str(ROOT / "examples/Secretfile.yml"),
                    "DJANGO_SETTINGS_MODULE": "project.settings", "PYTHONPATH": str(ROOT)})
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        subprocess.run([sys.executable, "-c", SEED.format(rows=args.rows)], cwd=ROOT, env=env, check=True)
        print(f"{args.rows:,} rows seeded ({Path(tmp, 'service.sqlite3').stat().st_size / 2**20:.0f} MB of SQLite)")
        print(f"{'path':<40}{'rows':>11}{'MB out':>9}{'seconds':>9}{'RSS before':>12}{'peak RSS':>10}")
        for fraction in args.fractions:
            first = args.rows - round(args.rows * fraction)
            since = _stamp(first)
            for label, measure in (("GET /audit/logs (Accept: x-ndjson)", _served),
                                   ("manage.py audit --format jsonl", _command)):
                lines, size, seconds, before, peak = measure(env, Path(tmp), since)
                print(f"{label:<40}{lines:>11,}{size / 2**20:>9.1f}{seconds:>9.1f}{before:>10.0f}MB{peak:>8.0f}MB",
                      flush=True)


def _served(env: dict[str, str], tmp: Path, since: str) -> tuple[int, int, float, float, float]:
    """Export through a fresh ``serve`` (one worker); the worker's RSS high-water mark before and after."""
    port = free_port()
    with open(tmp / "serve.log", "ab") as log:
        server = subprocess.Popen([sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "1"],
                                  cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/health", deadline_s=90)
        worker = _only_child(server.pid)
        # One small authenticated read first: the request path's imports and the database connection.
        _get(port, "/audit/logs?limit=1", {"Accept": "application/json"})
        before = _hwm_mb(worker)
        start = time.perf_counter()
        lines, size = _get(port, f"/audit/logs?since={since}", {"Accept": "application/x-ndjson"})
        seconds = time.perf_counter() - start
        return lines, size, seconds, before, _hwm_mb(worker)
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=60)


def _command(env: dict[str, str], tmp: Path, since: str) -> tuple[int, int, float, float, float]:
    """``manage.py audit --format jsonl`` read from a pipe; its peak RSS, and an empty export's."""
    baseline = _run_command(env, ["--until", "2025-01-01T00:00:00Z"])[3]
    lines, size, seconds, peak = _run_command(env, ["--since", since])
    return lines, size, seconds, baseline, peak


def _run_command(env: dict[str, str], args: list[str]) -> tuple[int, int, float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "manage.py", "audit", "--format", "jsonl", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None
    lines = size = 0
    while chunk := proc.stdout.read(READ):
        size += len(chunk)
        lines += chunk.count(b"\n")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0, proc.returncode
    return lines, size, time.perf_counter() - start, usage.ru_maxrss / 1024


def _get(port: int, path: str, headers: dict[str, str]) -> tuple[int, int]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"X-API-Key": KEY, **headers})
    lines = size = 0
    with urllib.request.urlopen(request, timeout=600) as response:
        assert response.status == 200, response.status
        while chunk := response.read(READ):
            size += len(chunk)
            lines += chunk.count(b"\n")
    return lines, size


def _only_child(pid: int) -> int:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    assert len(children) == 1, f"expected one gunicorn worker under {pid}, found {children}"
    return int(children[0])


def _hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for {pid}")


def _stamp(seconds: int) -> str:
    from datetime import UTC, datetime, timedelta

    return (datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


if __name__ == "__main__":
    main()
