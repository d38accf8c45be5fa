"""``secretsctl --addr`` against the local mode: ``status`` and ``sync`` of 1,000 secrets.

In a throwaway folder and SQLite database: a definition of ``--size`` secrets (dotenv files), a
``manage.py serve`` (``--workers`` web workers) and its job worker on a free loopback port. Each
figure is the median wall seconds of ``--runs`` runs of the installed ``secretsctl``, in a new
process each, as a CI job runs it: the local mode (``-f`` the definition, the service's database),
then the remote mode (``--addr``, the key in SECRETSCTL_API_KEY, no definition or database on
the client's side). ``sync`` starts from nothing each run (lockfile and targets removed), so
every secret is generated and written; ``status`` reads all of them after a sync. The remote
status makes one request per secret plus a listing and a rotation check; the requests it made
are counted from the audit rows it added. ``--connections 1 4`` then times the remote status
with each number of requests at a time (``secretsapi.cli.remote.client.CONNECTIONS``), the runs
interleaved so that the host's load falls on each alike. The load average is printed before
and after.

    .venv/bin/python bench/bench_cli_remote.py [--size 1000] [--runs 3] [--workers 2] [--connections 1 4]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_support import API_KEY, ROOT, Server, migrate, reset_state, service_env, write_definition

SECRETSCTL = str(ROOT / ".venv" / "bin" / "secretsctl")
PYTHON = str(ROOT / ".venv" / "bin" / "python")
# secretsctl with another number of requests at a time (the client's constant, set before it runs).
WITH_CONNECTIONS = ("import sys; from secretsapi.cli.remote import client; client.CONNECTIONS = int(sys.argv.pop(1)); "
                    "from secretsapi.cli.entry import main; main()")


def _rows(db: Path) -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT count(*) FROM audit_auditentry").fetchone()[0])


def _run(args: list[str], env: dict[str, str], folder: Path, ok: tuple[int, ...] = (0,),
         program: tuple[str, ...] = (SECRETSCTL,)) -> float:
    start = time.perf_counter()
    done = subprocess.run([*program, *args], cwd=folder, env=env, timeout=900, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in ok:
        raise RuntimeError(f"secretsctl {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--connections", type=int, nargs="*", default=[])
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-cli-remote-") as tmp:
        folder, data = Path(tmp) / "project", Path(tmp) / "data"
        folder.mkdir()
        data.mkdir()
        write_definition(folder, args.size)
        env = service_env(folder, data)
        migrate(env)
        server = Server(env, args.workers)
        server.start()
        try:
            client = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp,
                      "XDG_CONFIG_HOME": str(Path(tmp) / "config"), "SECRETSCTL_API_KEY": API_KEY,
                      "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
            modes = {"local": (env, ["-f", "Secretfile.yml"]),
                     "--addr": (client, ["--addr", f"http://127.0.0.1:{server.port}"])}
            db = data / "service.sqlite3"
            results: dict[str, dict[str, float]] = {}
            for mode, (mode_env, prefix) in modes.items():
                syncs = []
                for _ in range(args.runs):
                    reset_state(folder)
                    syncs.append(_run([*prefix, "-q", "sync"], mode_env, folder))
                statuses = []
                before = _rows(db) if db.exists() else 0
                for _ in range(args.runs):
                    statuses.append(_run([*prefix, "-q", "status"], mode_env, folder))
                rows = ((_rows(db) if db.exists() else 0) - before) / args.runs
                results[mode] = {"sync": statistics.median(syncs), "status": statistics.median(statuses),
                                 "rows": rows}
            remote_env, remote_prefix = modes["--addr"]
            by_connections: dict[int, list[float]] = {n: [] for n in args.connections}
            for _ in range(args.runs):
                for n in args.connections:
                    program = (PYTHON, "-c", WITH_CONNECTIONS, str(n))
                    by_connections[n].append(_run([*remote_prefix, "-q", "status"], remote_env, folder,
                                                  program=program))
        finally:
            server.stop()
    print(f"{args.size} secrets, median of {args.runs} runs, wall seconds (a new secretsctl process each)")
    print(f"{'mode':<8} {'sync':>8} {'status':>8} {'audit rows per status':>22}")
    for mode, figures in results.items():
        print(f"{mode:<8} {figures['sync']:>8.2f} {figures['status']:>8.2f} {figures['rows']:>22.0f}")
    for n, walls in by_connections.items():
        print(f"--addr status, {n} request(s) at a time: median {statistics.median(walls):.2f} s "
              f"(runs {', '.join(f'{w:.2f}' for w in walls)})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
