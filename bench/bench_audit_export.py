"""The audit export streams in constant memory: peak RSS of exporting 10,000, 100,000 and 1,000,000 rows.

    .venv/bin/python bench/bench_audit_export.py [--rows 1000000] [--fractions 0.01 0.1 1]

Builds a throwaway SQLite database (migrations applied) and seeds ``--rows`` audit rows with
``bulk_create`` (one second apart). Then, each in a fresh process, exports the newest fraction
of them (``since`` picks it) through ``GET /audit/logs`` as NDJSON (Django's test client, the
full middleware and view stack, reading the streamed body and dropping it) and through
``manage.py audit --format csv``, and prints rows, bytes, seconds and the process's peak RSS
beside its RSS before the export. Constant memory: the peak does not grow with the rows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

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

EXPORT = """
import io, json, resource, sys, time
import django
django.setup()
from django.core.management import call_command
from django.test import Client

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

since = sys.argv[1]
before = peak_mb()
start = time.perf_counter()
size = lines = 0
if sys.argv[2] == "http":
    response = Client().get("/audit/logs", {{"format": "jsonl", "since": since}}, HTTP_X_API_KEY="bench-key")
    assert response.status_code == 200, response.status_code
    for chunk in response.streaming_content:
        size += len(chunk)
        lines += chunk.count(b"\\n")
else:
    class Sink(io.TextIOBase):
        def write(self, text):
            global size, lines
            size += len(text)
            lines += text.count("\\n")
            return len(text)
    call_command("audit", "--format", "csv", "--since", since, stdout=Sink())
    lines -= 1  # the header
print(json.dumps({{"lines": lines, "bytes": size, "seconds": time.perf_counter() - start,
                  "rss_before_mb": before, "peak_mb": peak_mb()}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.01, 0.1, 1.0])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
        env.update({"SERVICE_DATA_DIR": tmp, "SERVICE_API_KEY": "bench-key",
                    "DJANGO_SETTINGS_MODULE": "project.settings", "PYTHONPATH": str(ROOT)})
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        subprocess.run([sys.executable, "-c", SEED.format(rows=args.rows)], cwd=ROOT, env=env, check=True)
        print(f"{args.rows:,} rows seeded ({Path(tmp, 'service.sqlite3').stat().st_size / 2**20:.0f} MB of SQLite)")
        print(f"{'path':<28}{'rows':>11}{'MB out':>9}{'seconds':>9}{'RSS before':>12}{'peak RSS':>10}")
        for fraction in args.fractions:
            first = args.rows - round(args.rows * fraction)
            since = "2026-01-01T00:00:00Z" if first == 0 else _stamp(first)
            for path in ("http", "cli"):
                done = subprocess.run([sys.executable, "-c", EXPORT.format(), since, path], cwd=ROOT, env=env,
                                      check=True, capture_output=True, text=True)
                got = json.loads(done.stdout.strip().splitlines()[-1])
                label = "GET /audit/logs (NDJSON)" if path == "http" else "manage.py audit --format csv"
                print(f"{label:<28}{got['lines']:>11,}{got['bytes'] / 2**20:>9.1f}{got['seconds']:>9.1f}"
                      f"{got['rss_before_mb']:>10.0f}MB{got['peak_mb']:>8.0f}MB")


def _stamp(seconds: int) -> str:
    from datetime import UTC, datetime, timedelta

    return (datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


if __name__ == "__main__":
    main()
