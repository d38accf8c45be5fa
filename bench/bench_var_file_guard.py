"""What the var file guard and the recorded-value check cost a request (in-process, no server).

For definitions of N secrets, synced once (so the lockfile records every target), prints the
median time of ``Workspace.definition()`` without var files, with one (the guard's checks on a
warm cache), and of render with one (the guard plus the recorded-value check). Figures on a
shared machine: read them as ratios inside one run.

    .venv/bin/python bench/bench_var_file_guard.py [--sizes 1000 5000 20000] [--rounds 9]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml

from secretsapi import service
from secretsapi.service.recorded_values import without_recorded_values
from secretsapi.service.workspace import Workspace


def _median_ms(call: Callable[[], Any], rounds: int) -> float:
    call()  # warm the caches, as a served request finds them
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _render(ws: Workspace) -> None:
    """Render as the action does it: through the recorded-value check."""
    without_recorded_values(ws, lambda: service.render_definition(ws))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    print(f"{'secrets':>8} {'no var file':>12} {'one var file':>13} {'render + var file':>18}  (ms, median)")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            doc = {"version": "1.0", "variables": {"env": "dev"}, "secrets": [
                {"name": f"s{i}", "kind": "random_hex", "targets": [{"provider": "local", "kind": "file",
                 "config": {"path": f"out/{{{{ var.env }}}}/{i % 20}.env"}}]} for i in range(size)]}
            (root / "Secretfile.yml").write_text(yaml.safe_dump(doc))
            (root / "prod.yml").write_text("env: prod\n")
            bare = Workspace(definition_path=root / "Secretfile.yml")
            service.sync(bare)
            time.sleep(2.5)  # past the lockfile read cache's settling time, as on a quiet server
            ws = Workspace(definition_path=root / "Secretfile.yml", var_files=("prod.yml",))
            plain = _median_ms(bare.definition, args.rounds)
            guarded = _median_ms(ws.definition, args.rounds)
            render = _median_ms(functools.partial(_render, ws), max(3, args.rounds // 3))
            print(f"{size:>8} {plain:>12.2f} {guarded:>13.2f} {render:>18.1f}")


if __name__ == "__main__":
    main()
