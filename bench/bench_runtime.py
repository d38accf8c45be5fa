"""The HTTP runtime on the same work: gunicorn's stock gthread worker, served directly and behind
the shipped nginx (deploy/nginx/), against another checkout's ``serve`` (say the commit before
the home-made worker was removed), request p99 under wrk for ``/health`` and a status read.

Rounds are interleaved (every setup once per round, the order turning), so a shared machine's
drift hits all alike. Run:
``.venv/bin/python bench/bench_runtime.py /tmp/old [--rounds 5] [--seconds 3] [--secrets 1000]``
(``git worktree add /tmp/old <commit>`` and a ``.venv`` link in it first).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench_support as b
from bench_ab_serve import start

from tests.processes.proxy import start_proxy

PATHS = ("/health", "/secrets/s00042/status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the checkout to compare with (served directly)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--secrets", type=int, default=1000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="secrets-bench-runtime-"))
    procs: list[subprocess.Popen[bytes]] = []
    setups: dict[str, int] = {}
    proxy = None
    try:
        for name, checkout in (("other checkout, direct", args.other), ("gthread, direct", b.ROOT)):
            proc, port = start(checkout, tmp / name.replace(" ", "_").replace(",", ""), 2, args.secrets)
            procs.append(proc)
            setups[name] = port
            assert b.request(port, "POST", "/sync", {}, timeout=300)[0] == 200
        proxy = start_proxy(tmp / "nginx", setups["gthread, direct"])
        setups["gthread behind nginx"] = proxy.port
        figures: dict[tuple[str, str], list[dict[str, float]]] = {}
        for round_ in range(args.rounds):
            order = list(setups.items())
            order = order[round_ % len(order):] + order[:round_ % len(order)]
            for path in PATHS:
                for name, port in order:
                    figures.setdefault((name, path), []).append(
                        b.load(port, path, seconds=args.seconds, connections=args.connections))
        print(f"{'setup':<26} {'path':<24} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}  (medians of {args.rounds} rounds, "
              f"wrk -c{args.connections}, 2 workers x 4 threads)")
        for (name, path), runs in figures.items():
            print(f"{name:<26} {path:<24} {statistics.median(r['rps'] for r in runs):>8.0f} "
                  f"{statistics.median(r['p50_ms'] for r in runs):>8.2f} "
                  f"{statistics.median(r['p99_ms'] for r in runs):>8.2f}")
    finally:
        if proxy is not None:
            proxy.stop()
        for proc in procs:
            proc.terminate()
        deadline = time.monotonic() + 30
        for proc in procs:
            proc.wait(timeout=max(1, deadline - time.monotonic()))


if __name__ == "__main__":
    main()
