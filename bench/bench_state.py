"""What the engine's state operations cost on large definitions, in-process (no server, no database).

For each size, in a throwaway folder: a first sync of every secret, a plain sync (nothing to
generate: every target read back and completed), a forced sync, a drift check, a forced
rotation of one secret, and the same rotation in a definition whose first secret also has a
``local/template`` target rendering every 100th secret (``--template-every``), then a drift
check there. Each figure is the median of ``--runs`` runs; beside it, how many times the
operation took the lockfile lock (one write should take it once). The load average is printed
before and after: the machine is shared, so compare figures of one run only.

    .venv/bin/python bench/bench_state.py [--sizes 5000 20000] [--runs 3] [--template-every 100]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_support as b

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.state import locks
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace

_taken = [0]
_lockfile_lock = locks.lockfile_lock


@contextlib.contextmanager
def _counted(*args: Any, **kwargs: Any) -> Iterator[Any]:
    _taken[0] += 1
    with _lockfile_lock(*args, **kwargs) as held:
        yield held


def _install_counter() -> None:
    """Count the lockfile lock wherever the engine takes it (it calls ``locks.lockfile_lock``)."""
    locks.lockfile_lock = _counted


def _template_definition(folder: Path, size: int, every: int) -> Path:
    path = b.write_definition(folder, size)
    names = [f"s{i:05d}" for i in range(0, size, every)]
    (folder / "app.conf.j2").write_text("".join(f"{name}={{{{ {name} }}}}\n" for name in names))
    text = path.read_text().replace(
        "targets: [{provider: local, kind: file, config: {path: out/f00.env, format: dotenv}}]}",
        "targets: [{provider: local, kind: file, config: {path: out/f00.env, format: dotenv}}, "
        "{provider: local, kind: template, config: {template_path: app.conf.j2, output_path: out/app.conf}}]}",
        1,
    )
    path.write_text(text)
    return path


def _lose(folder: Path) -> None:
    """One secret to generate again (its entry dropped) and the template's output to render again."""
    lockfile = folder / ".gitsecrets.lock"
    data = json.loads(lockfile.read_text())
    data["secrets"].pop("s00002", None)
    lockfile.write_text(json.dumps(data))
    (folder / "out" / "app.conf").unlink(missing_ok=True)


def _time(action: Callable[[], Any], runs: int, reset: Callable[[], None] | None = None) -> tuple[float, int]:
    times, taken = [], 0
    for _ in range(runs):
        if reset is not None:
            reset()
        before = _taken[0]
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
        taken = _taken[0] - before
    return statistics.median(times), taken


def _size(size: int, runs: int, every: int) -> list[tuple[str, float, int]]:
    rows: list[tuple[str, float, int]] = []
    with tempfile.TemporaryDirectory(prefix="bench-state-") as tmp:
        folder = Path(tmp) / "plain"
        folder.mkdir()
        ws = Workspace(b.write_definition(folder, size), lock_timeout=60, environ={})
        ws.definition()
        rows.append(("first sync", *_time(lambda: sync(ws), runs, lambda: b.reset_state(folder))))
        rows.append(("plain sync", *_time(lambda: sync(ws), runs)))
        rows.append(("forced sync", *_time(lambda: sync(ws, force=True), runs)))
        rows.append(("drift", *_time(lambda: detect_drift(ws), runs)))
        one = "s00001"
        rows.append(("rotate one (forced)", *_time(lambda: execute_rotation(ws, secret_name=one, force=True), runs)))
        folder = Path(tmp) / "template"
        folder.mkdir()
        ws = Workspace(_template_definition(folder, size, every), lock_timeout=60, environ={})
        ws.definition()
        sync(ws)
        rows.append((f"template 1/{every}: rotate one (forced)",
                     *_time(lambda: execute_rotation(ws, secret_name=f"s{every:05d}", force=True), runs)))
        rows.append((f"template 1/{every}: plain sync", *_time(lambda: sync(ws), runs)))
        rows.append((f"template 1/{every}: sync, 1 entry + output lost",
                     *_time(lambda: sync(ws), runs, lambda: _lose(folder))))
        rows.append((f"template 1/{every}: drift", *_time(lambda: detect_drift(ws), runs)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--template-every", type=int, default=100)
    args = parser.parse_args()
    _install_counter()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(f"{'secrets':>8}  {'operation':<36} {'median s':>9} {'lockfile locks':>15}")
    for size in args.sizes:
        for name, seconds, taken in _size(size, args.runs, args.template_every):
            print(f"{size:>8}  {name:<44} {seconds:>9.3f} {taken:>15}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
