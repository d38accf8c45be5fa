"""Another writer's wait while a long outcome is written (SQLite file, two processes, no server).

One process writes the outcome of a sync of ``--names`` secrets (``begin``, the mentions, then
``finish``: the audit row and its mentions), ``--rounds`` times; another records one row every
5 ms meanwhile, as another project's status does, and times each. Both ways: the mentions in the
outcome's transaction (``MENTION_CHUNK`` as large as the list: one transaction, as before) and a
chunk to a transaction (``audit.recorder.mention_ahead``). Prints the other writer's p50, p99 and
max per way, and the long writer's seconds a round.

    .venv/bin/python bench/bench_mention_chunks.py [--names 20000] [--rounds 5] [--chunks 1000 250]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable

SETUP = "import django; django.setup()\n"
LONG = SETUP + """
import sys, time, json
from audit import recorder
recorder.MENTION_CHUNK = int(sys.argv[1])
names = [f"s{i:05d}" for i in range(int(sys.argv[2]))]
took = []
for _ in range(int(sys.argv[3])):
    row = recorder.begin(action="sync", resource="secrets", user="big")
    started = time.perf_counter()
    recorder.mention_ahead(row, "secrets", {"generated": names})
    recorder.finish(row, success=True, details={"generated": names}, mentioned=True)
    took.append(time.perf_counter() - started)
    time.sleep(0.2)
print(json.dumps(took))
"""
OTHER = SETUP + """
import json, os, sys, time
from audit.recorder import record
waits = []
stop = sys.argv[1]
for _ in range(100_000):
    if os.path.exists(stop):
        break
    started = time.perf_counter()
    record(action="get_secret_status", resource="secret:s1", user="other", success=True)
    waits.append((time.perf_counter() - started) * 1000)
    time.sleep(0.005)
print(json.dumps(waits))
"""


def run(chunk: int, names: int, rounds: int, folder: Path) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    data = folder / f"data-{chunk}"
    env.update(SERVICE_DATA_DIR=str(data), SERVICE_CONFIG=str(ROOT / "examples" / "Secretfile.yml"),
               SERVICE_SECRET_KEY="bench-" + "x" * 50, DJANGO_SETTINGS_MODULE="project.settings",
               SERVICE_LOG_LEVEL="warning")
    subprocess.run([PYTHON, "manage.py", "migrate", "--verbosity", "0"], cwd=ROOT, env=env, check=True, timeout=120)
    stop = folder / f"stop-{chunk}"
    other = subprocess.Popen([PYTHON, "-c", OTHER, str(stop)], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    long = subprocess.run([PYTHON, "-c", LONG, str(chunk), str(names), str(rounds)], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True, timeout=600)
    stop.touch()
    waits = json.loads(other.communicate(timeout=60)[0])
    took = json.loads(long.stdout)
    ordered = sorted(waits)
    return {"n": len(waits), "p50_ms": statistics.median(waits), "p99_ms": ordered[int(len(ordered) * 0.99) - 1],
            "max_ms": ordered[-1], "long_s": statistics.median(took)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--names", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chunks", type=int, nargs="+", default=[1000],
                        help="chunk sizes to time beside the one transaction (default: 1000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-mentions-") as tmp:
        ways = [("one transaction", args.names), *((f"chunks of {n}", n) for n in args.chunks)]
        for label, chunk in ways:
            got = run(chunk, args.names, args.rounds, Path(tmp))
            print(f"{label:16} other writer: p50 {got['p50_ms']:6.2f} ms  p99 {got['p99_ms']:7.2f} ms  "
                  f"max {got['max_ms']:7.2f} ms  ({got['n']} rows)   long outcome: {got['long_s']:.2f} s a round")


if __name__ == "__main__":
    main()
