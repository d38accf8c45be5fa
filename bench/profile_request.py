"""In-process profile of one endpoint through Django's full stack (middleware, auth, audit).

Run: ``.venv/bin/python bench/profile_request.py /secrets/s00500/status [--count 2000]``.
Uses a temporary data folder and a generated 1,000-secret definition; prints per-request
milliseconds and the pyinstrument tree (``PROFILE_ALL=1``: every frame, Django's too). Never
collected by pytest.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_support as b


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--secrets", type=int, default=1000)
    parser.add_argument("--method", default="GET")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--named-key", action="store_true",
                        help="Authenticate with a named key (every scope) instead of SERVICE_API_KEY.")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="profile-request-"))
    folder, data = tmp / "def", tmp / "data"
    folder.mkdir()
    data.mkdir()
    b.write_definition(folder, args.secrets)
    os.environ.update(b.service_env(folder, data))
    b.migrate(dict(os.environ))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    key = b.API_KEY
    if args.named_key:
        from apikeys import keys

        key = keys.create("bench", ["read", "write", "audit", "reveal"]).key
    client = Client(HTTP_X_API_KEY=key)
    # Synced as the command line does: a POST /sync would be a job, and no worker runs here.
    call_command("sync", stdout=io.StringIO())

    def run(count: int) -> float:
        started = time.perf_counter()
        for _ in range(count):
            response = client.generic(args.method, args.path, "{}" if args.method == "POST" else "",
                                      content_type="application/json")
            assert response.status_code == 200, response.content[:200]
        return (time.perf_counter() - started) / count * 1000

    run(50)
    print(f"{args.method} {args.path}: {run(args.count):.3f} ms per request (no profiler)")
    if not args.no_profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0002)
        profiler.start()
        run(args.count)
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=bool(os.environ.get("PROFILE_ALL"))))


if __name__ == "__main__":
    main()
