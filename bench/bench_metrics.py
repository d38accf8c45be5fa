"""What a ``GET /metrics`` scrape costs on a large audit log (SQLite, the embedded default).

Seeds ``--rows`` audit rows, one a second (the long operations with ``duration_seconds``, the
reads without; a seventh of the rotations and drift checks by the scheduler), then times the
collector's database parts (operations, durations, scheduled runs, deliveries) and the whole
exposition, median of ``--runs``. Prints one line per figure.

``--projects N`` (0 by default) adds N projects of ``--secrets`` (200) secrets each, every one
synced (its lockfile written), and spreads the seeded rows over them and the default one: then
the due check is timed too: every project's once with the per-process cache empty and no time
limit (what a round of them costs the process), then a scrape's share of it (the stale projects
within ``collector.DUE_SCRAPE_SECONDS``, after the figures have aged a minute) and a scrape with
every figure fresh.

    .venv/bin/python bench/bench_metrics.py [--rows 100000] [--runs 5] [--projects 0] [--secrets 200]
"""

from __future__ import annotations

import argparse
import json
import math
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
ACTIONS = ("sync", "check_rotation", "check_drift", "list_secrets", "get_secret_status", "read_audit_logs",
           "execute_rotation", "authenticate", "read_metrics", "list_secrets")


def seed(db: Path, rows: int, projects: list[str]) -> None:
    con = sqlite3.connect(db)
    base = datetime.now(UTC) - timedelta(seconds=rows)

    def generate() -> Any:
        for i in range(rows):
            action = ACTIONS[i % len(ACTIONS)]
            details = {"duration_seconds": (i % 997) / 100} if action in ("sync", "check_rotation", "check_drift",
                                                                            "execute_rotation") else {"count": 1}
            # The scheduler runs rotations and drift checks only; the others are callers'.
            user = "scheduler" if action in ("execute_rotation", "check_drift") and i % 7 == 0 else "service"
            yield ((base + timedelta(seconds=i)).strftime("%Y-%m-%d %H:%M:%S.%f"), action, "secrets", user,
                   json.dumps(details), i % 17 != 0, projects[i % len(projects)])

    with con:
        con.executemany("INSERT INTO audit_auditentry (timestamp, action, resource, user, details, success, project) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)", generate())
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
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--projects", type=int, default=0)
    parser.add_argument("--secrets", type=int, default=200)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-metrics-"))
    # The definitions beside the data folder, never in it (the service refuses its own files).
    os.environ.update(SERVICE_DATA_DIR=str(folder / "data"), SERVICE_SECRET_KEY="bench-" + "x" * 50,
                      SERVICE_CONFIG=str(folder / "Secretfile.yml"), DJANGO_SETTINGS_MODULE="project.settings")
    os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from projects import registry
    from secretsapi.actions import metrics as collector

    call_command("migrate", verbosity=0)
    names = add_projects(folder, args.projects, args.secrets)
    seed(Path(connection.settings_dict["NAME"]), args.rows, ["default", *names])
    shown = registry.all_projects()

    def due_round() -> None:
        collector._due_cache.clear()
        limit, collector.DUE_SCRAPE_SECONDS = collector.DUE_SCRAPE_SECONDS, math.inf
        try:
            list(collector._due(shown))
        finally:
            collector.DUE_SCRAPE_SECONDS = limit

    def due_aged() -> None:
        with collector._due_lock:  # every figure a minute old: the scrape checks what its time allows
            for key, (at, wall, figures) in list(collector._due_cache.items()):
                collector._due_cache[key] = (at - collector.DUE_MAX_AGE - 1, wall, figures)
        list(collector._due(shown))

    def due_fresh() -> None:
        with collector._due_lock:
            for key, (_, wall, figures) in list(collector._due_cache.items()):
                collector._due_cache[key] = (time.monotonic(), wall, figures)
        list(collector._due(shown))

    def scrape_fresh() -> None:
        due_fresh()
        collector.read_metrics(actor="bench")

    started = time.perf_counter()
    due_round()
    print(f"{args.rows} rows {len(shown)} projects  {'due check, every project':28} "
          f"{(time.perf_counter() - started) * 1000:9.1f} ms (once, no time limit)")
    figures: dict[str, Callable[[], Any]] = {
        "operations and durations": lambda: list(collector._operations(datetime.now(UTC), None)),
        "scheduled runs": lambda: list(collector._scheduled(datetime.now(UTC), shown)),
        "due check, a scrape's share": due_aged,
        "due check, every one fresh": due_fresh,
        "deliveries": lambda: list(collector._deliveries()),
        "drift and scrapes": lambda: (list(collector._drift(shown)), list(collector._scrapes())),
        "whole scrape (counted)": scrape_fresh,
    }
    for label, fn in figures.items():
        fn()
        print(f"{args.rows} rows {len(shown)} projects  {label:28} {median_ms(fn, args.runs):9.1f} ms")


def add_projects(folder: Path, count: int, secrets: int) -> list[str]:
    """``count`` projects of ``secrets`` secrets, each synced (a lockfile to read); their names."""
    from bench_support import write_definition

    from projects import current, registry
    from secretsapi.actions import workspaces, writes

    write_definition(folder, secrets)  # the default project's
    names = [f"p{n:03d}" for n in range(count)]
    for name in ["default", *names]:
        if name != "default":
            (folder / name).mkdir()
            registry.add(name, str(write_definition(folder / name, secrets)), actor="bench")
        with current.using(registry.find(name)):
            writes.sync(workspaces.workspace(), actor="bench")
    return names


if __name__ == "__main__":
    main()
