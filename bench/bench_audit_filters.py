"""GET /audit/logs filters on a large table: each page's query plan and its median time.

    .venv/bin/python bench/bench_audit_filters.py [--rows 100000] [--runs 9]

Builds a throwaway SQLite database (migrations applied), seeds ``--rows`` audit rows directly
(one transaction, with the mentions the recorder would write for them), runs ANALYZE, then
times the page query of ``auditlog.read_audit_logs`` for each filter (without its own audit
row, timed apart as "record()") and prints the plan of the statement. For ``secret`` it also
times the search the mentions table replaces: a LIKE over every row's JSON details.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ACTIONS = ("sync", "check_rotation", "check_policy", "check_drift", "list_secrets",
           "get_secret_status", "read_audit_logs", "execute_rotation", "validate_config", "authenticate")


def seed(db: Path, rows: int, base: datetime) -> None:
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=OFF")
    entries: list[tuple[Any, ...]] = []
    mentions: list[tuple[Any, ...]] = []
    for i in range(rows):
        stamp = (base + timedelta(seconds=i)).strftime("%Y-%m-%d %H:%M:%S.%f")
        user = f"cli:user{i % 200}" if i % 10 == 0 else "service"
        if i % 30 == 0:  # a bulk sync naming 20 secrets in its lists
            names = [f"s{(i + k * 50) % 1000:05d}" for k in range(20)]
            details = {"generated": names[:15], "skipped": names[15:], "failed": [], "errors": []}
            entries.append((i + 1, stamp, "sync", "secrets", user, json.dumps(details), i % 17 != 0))
            mentions.extend((i + 1, n, stamp) for n in names)
            continue
        action = ACTIONS[i % len(ACTIONS)]
        resource = f"secret:s{(i * 7919) % 1000:05d}" if i % 3 else "secrets"
        entries.append((i + 1, stamp, action, resource, user, '{"count": 1}', i % 17 != 0))
        if i % 3:
            mentions.append((i + 1, resource[7:], stamp))
    with con:
        con.executemany("INSERT INTO audit_auditentry (id, timestamp, action, resource, user, details, success) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)", entries)
        con.executemany("INSERT INTO audit_auditmention (entry_id, secret, timestamp) VALUES (?, ?, ?)", mentions)
    con.execute("ANALYZE")
    con.close()


def median_ms(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="audit-filters-"))
    os.environ.update(SERVICE_DATA_DIR=str(folder), SERVICE_SECRET_KEY="bench-" + "x" * 50,
                      DJANGO_SETTINGS_MODULE="project.settings")
    os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from audit.recorder import record
    from secretsapi.actions import auditlog

    call_command("migrate", verbosity=0)
    db = Path(connection.settings_dict["NAME"])
    base = datetime(2026, 1, 1, tzinfo=UTC)
    started = time.perf_counter()
    seed(db, args.rows, base)
    print(f"{args.rows} rows seeded in {time.perf_counter() - started:.1f} s ({db})")
    connection.close()

    middle = base + timedelta(seconds=args.rows // 2)
    recent = base + timedelta(seconds=args.rows * 9 // 10)
    cases: list[tuple[str, dict[str, Any], int]] = [
        ("no filter", {}, 0),
        ("success=false", {"success__in": [False]}, 0),
        ("success=false, offset=2000", {"success__in": [False]}, 2000),
        ("user=cli:user7", {"user": "cli:user7"}, 0),
        ("since (last 10%)", {"bounds": {"timestamp__gte": recent}}, 0),
        ("since+until (1 h in the middle)",
         {"bounds": {"timestamp__gte": middle, "timestamp__lt": middle + timedelta(hours=1)}}, 0),
        ("action=check_drift, until=middle", {"action": "check_drift", "bounds": {"timestamp__lt": middle}}, 0),
        ("secret=s00042", {"secret": "s00042"}, 0),
        ("secret=s00042, success=false", {"secret": "s00042", "success__in": [False]}, 0),
        ("secret=s00042, since (last 10%)", {"secret": "s00042", "bounds": {"timestamp__gte": recent}}, 0),
    ]
    print(f"{'query (limit=50)':40} {'ms':>8}  plan of the page's ids")
    for label, spec, offset in cases:
        spec = dict(spec)
        bounds = spec.pop("bounds", {})
        secret = spec.pop("secret", None)

        def page(spec: dict[str, Any] = spec, bounds: dict[str, Any] = bounds, secret: Any = secret,
                 offset: int = offset) -> list[Any]:
            return auditlog._audit_page(50, offset, spec, bounds, secret)  # the page without its audit row

        page()
        ms = median_ms(page, args.runs)
        with connection.cursor() as cursor:
            from django.test.utils import CaptureQueriesContext

            with CaptureQueriesContext(connection) as captured:
                page()
            cursor.execute("EXPLAIN QUERY PLAN " + captured.captured_queries[-1]["sql"])
            plan = " / ".join(row[3] for row in cursor.fetchall())
        print(f"{label:40} {ms:8.2f}  {plan}")

    # The alternative the mentions table replaces: JSON details searched row by row.
    like = ("SELECT id FROM audit_auditentry WHERE resource = %s OR details LIKE %s "
            "ORDER BY timestamp DESC, id DESC LIMIT 50")

    def scan() -> None:
        with connection.cursor() as cursor:
            cursor.execute(like, ["secret:s00042", '%"s00042"%'])
            cursor.fetchall()

    def rare_scan() -> None:
        with connection.cursor() as cursor:
            cursor.execute(like, ["secret:nowhere", '%"nowhere"%'])
            cursor.fetchall()

    print(f"{'secret=s00042 as a LIKE over details':40} {median_ms(scan, args.runs):8.2f}  (table scan)")
    print(f"{'secret=nowhere as a LIKE over details':40} {median_ms(rare_scan, args.runs):8.2f}  (whole table)")
    print(f"{'secret=nowhere, mentions index':40} "
          f"{median_ms(lambda: auditlog._audit_page(50, 0, {}, {}, 'nowhere'), args.runs):8.2f}")

    names = [f"s{k:05d}" for k in range(20)]
    write_plain = median_ms(lambda: record(action="list_secrets", resource="secrets", user="service",
                                           success=True, details={"count": 1}), 300)
    write_one = median_ms(lambda: record(action="get_secret_status", resource="secret:s00001", user="service",
                                         success=True, details={"exists": True}), 300)
    write_twenty = median_ms(lambda: record(action="sync", resource="secrets", user="service", success=True,
                                            details={"generated": names}), 300)
    print(f"record(): no secret {write_plain:.3f} ms, one secret {write_one:.3f} ms, "
          f"a sync naming 20 {write_twenty:.3f} ms")


if __name__ == "__main__":
    main()
