"""In-process phases of a cold sync: parse, check, generate+store, and peak memory.

Run: ``.venv/bin/python bench/profile_sync.py 5000 [--pyinstrument]``. Prints seconds per phase
and the process's peak RSS; no server, no database. Never collected by pytest.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_support as b

from secretsapi.service import sync
from secretsapi.service.definition import yaml_loader
from secretsapi.service.loading.loader import clear_definition_cache
from secretsapi.service.workspace import Workspace


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("size", type=int)
    parser.add_argument("--pyinstrument", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="profile-sync-"))
    path = b.write_definition(folder, args.size)
    text = path.read_text()
    print(f"{args.size} secrets, definition {len(text)} bytes, start RSS {rss_mb():.0f} MB")
    profiler = None
    if args.pyinstrument:
        from pyinstrument import Profiler
        profiler = Profiler()
        profiler.start()
    started = time.perf_counter()
    yaml_loader.load_yaml(text, source="x", max_bytes=1 << 30)
    parsed = time.perf_counter()
    print(f"load_yaml: {parsed - started:.3f} s, RSS {rss_mb():.0f} MB")
    ws = Workspace(path)
    ws.definition()
    loaded = time.perf_counter()
    print(f"load_definition (parse+check): {loaded - parsed:.3f} s, RSS {rss_mb():.0f} MB")
    result = sync(ws)
    done = time.perf_counter()
    print(f"sync: {done - loaded:.3f} s ({len(result.secrets_generated)} generated), RSS {rss_mb():.0f} MB")
    clear_definition_cache()
    if profiler is not None:
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False))


if __name__ == "__main__":
    main()
