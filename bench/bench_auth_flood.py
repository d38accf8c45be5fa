"""What a flood of wrong-key requests costs the audit database (issue 18.7).

Starts ``serve`` (2 workers, a key set) in a temporary folder, sends ``--requests`` GETs with a
wrong key and a ``--path-bytes`` path (4,000: gunicorn refuses
request lines past 4,094 bytes with 414) from ``--connections`` threads, and prints the growth of
the SQLite file (with its -wal), the rows written, the attempts they count and the time taken.
Before tallies: 3,000 requests with 4 KB paths grew the file by 16.6 MB.

    .venv/bin/python bench/bench_auth_flood.py [--requests 3000] [--path-bytes 4000] [--connections 4]
"""

from __future__ import annotations

import argparse
import http.client
import sqlite3
import sys
import tempfile
import threading
import time
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import Server, migrate, service_env, write_definition


def database_bytes(data_dir: Path) -> int:
    return sum(p.stat().st_size for p in data_dir.glob("service.sqlite3*") if p.suffix != ".lck")


def flood(port: int, path: str, count: int, connections: int) -> None:
    share = [count // connections + (i < count % connections) for i in range(connections)]

    def run(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            for _ in range(n):
                conn.request("GET", path, headers={"X-API-Key": "wrong"})
                response = conn.getresponse()
                response.read()
                if response.status != 401:
                    raise RuntimeError(f"expected 401, got {response.status}")
        finally:
            conn.close()

    threads = [threading.Thread(target=run, args=(n,)) for n in share]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--path-bytes", type=int, default=4000)
    parser.add_argument("--connections", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder, data_dir = Path(tmp), Path(tmp) / "data"
        data_dir.mkdir()
        write_definition(folder, 1)
        env = service_env(folder, data_dir)
        migrate(env)
        server = Server(env, workers=2)
        server.start()
        try:
            before = database_bytes(data_dir)
            started = time.monotonic()
            path = "/secrets/" + "a" * (args.path_bytes - len("/secrets/"))
            flood(server.port, path, args.requests, args.connections)
            elapsed = time.monotonic() - started
        finally:
            server.stop()
        with closing(sqlite3.connect(data_dir / "service.sqlite3")) as db:
            rows, counted = db.execute(
                "SELECT count(*), sum(json_extract(details, '$.count')) FROM audit_auditentry"
                " WHERE action = 'authenticate'").fetchone()
        grown = database_bytes(data_dir) - before
        print(f"{args.requests} wrong-key requests, {args.path_bytes}-byte paths, {args.connections} connections, "
              f"{elapsed:.1f} s: database +{grown} bytes, {rows} rows counting {counted} attempts")


if __name__ == "__main__":
    main()
