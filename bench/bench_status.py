"""What ``manage.py status`` costs on large definitions, and how many audit rows it writes.

For each size, in a throwaway folder and SQLite database: migrate, sync every secret once, then
run ``manage.py status`` (every secret) and ``manage.py status s00000`` (one secret: the
command's start-up and one read, the floor) as users do, in a new process each, and print the
median wall time of ``--runs`` runs and the audit rows each run of the full status added.

    .venv/bin/python bench/bench_status.py [--sizes 1000 20000] [--runs 3]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import PYTHON, ROOT, migrate, service_env, write_definition


def _seconds(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    # Exit 2 would mean a secret is not generated: every one is, so any failure is an error.
    subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, timeout=300,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _rows(db: Path) -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT count(*) FROM audit_auditentry").fetchone()[0])


def measure(size: int, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-status-") as tmp:
        folder = Path(tmp)
        write_definition(folder, size)
        env = service_env(folder, folder / "data")
        migrate(env)
        _seconds(["sync"], env)
        db = folder / "data" / "service.sqlite3"
        full, one, rows = [], [], []
        for _ in range(runs):
            before = _rows(db)
            full.append(_seconds(["status"], env))
            rows.append(_rows(db) - before)
            one.append(_seconds(["status", "s00000"], env))
        return {"status_s": statistics.median(full), "one_s": statistics.median(one), "rows": max(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 20000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'secrets':>8} {'status (s)':>11} {'one secret (s)':>15} {'rows/run':>9}")
    for size in args.sizes:
        figures = measure(size, args.runs)
        print(f"{size:>8} {figures['status_s']:>11.2f} {figures['one_s']:>15.2f} {figures['rows']:>9.0f}")


if __name__ == "__main__":
    main()
