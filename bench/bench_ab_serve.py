"""A/B of one endpoint under wrk between two checkouts (say main and a branch), both served the
way users serve them (``manage.py serve --workers N``), driven in interleaved rounds.

Each round loads A then B (then B then A in the next round), so a shared machine's drift hits
both alike; the figures to read are the median of the per-round ratios B/A and, when the
machine is busy, the ratio of each side's best round. Run:
``.venv/bin/python bench/bench_ab_serve.py /work/main . [--runs 7] [--seconds 3] [--connections 8]
[--workers 2] [--path /health]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_support as b


def cpu_seconds(master: int) -> float:
    """User + system CPU used so far by the master's workers (serve exec's into the master)."""
    total = 0.0
    for pid in Path(f"/proc/{master}/task/{master}/children").read_text().split():
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def start(checkout: Path, folder: Path, workers: int, secrets: int = 50) -> tuple[subprocess.Popen[bytes], int]:
    (folder / "data").mkdir(parents=True)
    b.write_definition(folder, secrets)
    env = b.service_env(folder, folder / "data")
    port = b.free_port()
    with open(folder / "serve.log", "ab") as log:
        proc = subprocess.Popen([b.PYTHON, "manage.py", "serve", "--workers", str(workers), "--port", str(port)],
                                cwd=checkout, env=env, stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if b.request(port, "GET", "/health", timeout=2)[0] == 200:
                return proc, port
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    proc.wait(timeout=30)
    raise RuntimeError(f"{checkout}: serve did not answer /health; see {folder / 'serve.log'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--path", default="/health")
    parser.add_argument("--secrets", type=int, default=50, help="secrets in the served definition")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="secrets-ab-"))
    servers: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
    try:
        for name, checkout in (("A", args.a), ("B", args.b)):
            servers[name] = start(checkout.resolve(), tmp / name, args.workers, args.secrets)
        ratios: list[float] = []
        rps: dict[str, list[float]] = {"A": [], "B": []}
        cpu_us: dict[str, list[float]] = {"A": [], "B": []}
        for round_ in range(args.runs):
            figures = {}
            for name in ("A", "B") if round_ % 2 == 0 else ("B", "A"):
                proc, port = servers[name]
                cpu = cpu_seconds(proc.pid)
                figures[name] = b.load(port, args.path, seconds=args.seconds, connections=args.connections)
                figures[name]["cpu_us"] = (cpu_seconds(proc.pid) - cpu) / figures[name]["requests"] * 1e6
                rps[name].append(figures[name]["rps"])
                cpu_us[name].append(figures[name]["cpu_us"])
            ratios.append(figures["B"]["rps"] / figures["A"]["rps"])
            print(f"round {round_ + 1}: " + "  ".join(
                f"{name} {figures[name]['rps']:6.0f} req/s, p99 {figures[name]['p99_ms']:5.1f} ms, "
                f"{figures[name]['cpu_us']:5.0f} us CPU/req" for name in ("A", "B")) + f"  B/A {ratios[-1]:.3f}",
                flush=True)
        print(f"median: A {statistics.median(rps['A']):.0f} req/s ({statistics.median(cpu_us['A']):.0f} us CPU/req), "
              f"B {statistics.median(rps['B']):.0f} req/s ({statistics.median(cpu_us['B']):.0f} us CPU/req), "
              f"B/A {statistics.median(ratios):.3f} (per-round ratios {min(ratios):.3f}..{max(ratios):.3f})")
        # On a shared machine the best round of each is the least disturbed one.
        best = {name: max(values) for name, values in rps.items()}
        print(f"best: A {best['A']:.0f} req/s, B {best['B']:.0f} req/s, B/A {best['B'] / best['A']:.3f}; "
              f"least CPU/req: A {min(cpu_us['A']):.0f} us, B {min(cpu_us['B']):.0f} us")
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
