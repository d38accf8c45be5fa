"""What the cross-instance locks cost a write on PostgreSQL (in-process, no server).

Prints the median time of one advisory lock taken and released with django-pglock (what
``secretsapi.database_locks`` uses) and with the hand-built SQL it replaced (a transaction
setting ``lock_timeout``, then ``pg_advisory_lock``; ``pg_advisory_unlock``), of one check
that the session still holds 65 locks (a full write: 64 stripes and the lockfile), and of a
forced sync of N file secrets with the checks and with them skipped.

    DATABASE_URL=postgres://... .venv/bin/python bench/bench_advisory_locks.py [--secrets 2000] [--rounds 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

import django

django.setup()

import yaml
from django.db import connection, transaction

from secretsapi import database_locks
from secretsapi.service import sync
from secretsapi.service.state import locks
from secretsapi.service.workspace import Workspace


def _median_ms(call: Callable[[], Any], rounds: int) -> float:
    call()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


@contextmanager
def _hand_built(key: int, timeout: float) -> Iterator[None]:
    """The SQL ``database_locks`` ran before django-pglock."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('lock_timeout', %s, true)", [f"{round(timeout * 1000)}ms"])
        cursor.execute("SELECT pg_advisory_lock(%s)", [key])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def _cycles(lock: Callable[[int, float], Any], count: int) -> Callable[[], None]:
    def run() -> None:
        for i in range(count):
            with lock(database_locks.advisory_key(f"bench:{i}"), 10.0):
                pass
    return run


def _check_65() -> Callable[[], None]:
    stack = ExitStack()
    probes = [stack.enter_context(database_locks.advisory_lock(database_locks.advisory_key(f"held:{i}"), 10.0))
              for i in range(65)]
    held = locks.Held()
    for probe in probes:
        held.add(probe)
    return held.check


def _sync_seconds(count: int, rounds: int, *, checks: bool) -> float:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "Secretfile.yml"
        secrets = [{"name": f"s{i}", "kind": "random_hex",
                    "targets": [{"provider": "local", "kind": "file", "config": {"path": f"out/s{i}.env"}}]}
                   for i in range(count)]
        path.write_text(yaml.safe_dump({"version": "1.0", "secrets": secrets}))
        ws = Workspace(definition_path=path, extra_lock=database_locks.extra_lockfile_lock())
        original = locks.Held.check
        if not checks:
            locks.Held.check = lambda self: None  # type: ignore[method-assign]
        try:
            return _median_ms(lambda: sync(ws, force=True), rounds) / 1000
        finally:
            locks.Held.check = original  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--secrets", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    if not database_locks.is_postgresql():
        sys.exit("DATABASE_URL must name a PostgreSQL database")
    cycles = 65  # the locks of a full write
    for label, lock in (("django-pglock", database_locks.advisory_lock), ("hand-built SQL", _hand_built)):
        print(f"65 locks taken and released, {label}: {_median_ms(_cycles(lock, cycles), args.rounds):.1f} ms")
    print(f"one check that 65 locks are still held: {_median_ms(_check_65(), args.rounds):.2f} ms")
    for checks in (True, False):
        label = "with" if checks else "without"
        print(f"forced sync of {args.secrets} file secrets {label} the checks: "
              f"{_sync_seconds(args.secrets, max(3, args.rounds // 3), checks=checks):.2f} s")


if __name__ == "__main__":
    main()
