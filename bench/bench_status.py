"""What ``manage.py status`` costs on large definitions, and how many audit rows it writes.

For each size, in a throwaway folder and SQLite database: migrate, sync every secret once, then
run ``manage.py status`` (every secret; "after sync" is the first run, on what the sync stored)
and ``manage.py status s00000`` (one secret: start-up,
reading the definition and one read; the floor) as users do, in a new process each, and print
the median wall and CPU (user + system) seconds of ``--runs`` runs and the audit rows each run
of the full status added. The definition an earlier run parsed is shared through the data
folder's ``cache/definitions/``: "cold" is the full status with that folder emptied first (the
first run after an edit), the other figures are the runs after it. Then, in this process, the
median time of the statuses alone (``secret_reads.secret_statuses`` with the definition already
parsed): what the status itself costs. The load average is printed before and after.
``--root`` runs the commands from another checkout (e.g. one before a change) for comparison.

    .venv/bin/python bench/bench_status.py [--sizes 1000 20000] [--runs 3] [--root ../main]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import PYTHON, ROOT, migrate, service_env, write_definition


def _run(args: list[str], env: dict[str, str], root: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # Exit 2 would mean a secret is not generated: every one is, so any failure is an error.
    subprocess.run([PYTHON, "manage.py", *args], cwd=root, env=env, check=True, timeout=300,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _rows(db: Path) -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT count(*) FROM audit_auditentry").fetchone()[0])


def _in_process(env: dict[str, str], runs: int) -> float:
    """Median seconds of the statuses alone, the definition parsed (as a served worker has it);
    in a child process, since Django reads its settings (the folder's) once per process."""
    code = (
        "import statistics, sys, time, django; django.setup()\n"
        "from secretsapi.actions import secret_reads, workspaces\n"
        "ws = workspaces.workspace(); ws.definition(); times = []\n"
        f"for _ in range({runs}):\n"
        "    start = time.perf_counter(); secret_reads.secret_statuses(ws, actor='bench')\n"
        "    times.append(time.perf_counter() - start)\n"
        "print(statistics.median(times))\n"
    )
    out = subprocess.run([PYTHON, "-c", code], cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "project.settings"},
                         check=True, timeout=300, capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def measure(size: int, runs: int, root: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-status-") as tmp:
        folder = Path(tmp)
        write_definition(folder, size)
        env = service_env(folder, folder / "data")
        migrate(env)
        _run(["sync"], env, ROOT)
        after_sync = _run(["status"], env, root)  # what the sync stored, as a user runs it next
        db = folder / "data" / "service.sqlite3"
        full, one, rows, cold = [], [], [], []
        for _ in range(runs):
            shutil.rmtree(folder / "data" / "cache" / "definitions", ignore_errors=True)
            cold.append(_run(["status"], env, root))
            before = _rows(db)
            full.append(_run(["status"], env, root))
            rows.append(_rows(db) - before)
            one.append(_run(["status", "s00000"], env, root))
        figures = {
            "wall": statistics.median(w for w, _ in full), "cpu": statistics.median(c for _, c in full),
            "one_wall": statistics.median(w for w, _ in one), "one_cpu": statistics.median(c for _, c in one),
            "rows": max(rows),
            "cold_wall": statistics.median(w for w, _ in cold), "cold_cpu": statistics.median(c for _, c in cold),
            "after_wall": after_sync[0], "after_cpu": after_sync[1],
        }
        if root == ROOT:
            figures["alone"] = _in_process(env, runs)
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 20000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose manage.py runs the status")
    args = parser.parse_args()
    root = args.root.resolve()
    print("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"{'secrets':>8} {'status wall/CPU s':>18} {'after sync':>11} {'cold wall/CPU s':>16} "
          f"{'one secret wall/CPU s':>22} {'rows/run':>9} {'statuses alone s':>17}")
    for size in args.sizes:
        f = measure(size, args.runs, root)
        alone = f"{f['alone']:.3f}" if "alone" in f else "-"
        print(f"{size:>8} {f['wall']:>9.2f}/{f['cpu']:<8.2f} {f['after_wall']:>6.2f}/{f['after_cpu']:<4.2f} "
              f"{f['cold_wall']:>8.2f}/{f['cold_cpu']:<7.2f} "
              f"{f['one_wall']:>11.2f}/{f['one_cpu']:<10.2f} {f['rows']:>9.0f} {alone:>17}")
    print("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
