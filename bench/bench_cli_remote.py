"""``secretsctl --addr`` against the local mode: ``status`` and ``sync`` of 1,000 secrets.

In a throwaway folder and SQLite database: a definition of ``--size`` secrets (dotenv files), a
``manage.py serve`` (``--workers`` web workers) and its job worker on a free loopback port. Each
figure is the median wall seconds of ``--runs`` runs of the installed ``secretsctl``, in a new
process each, as a CI job runs it: the local mode (``-f`` the definition, the service's database),
then the remote mode (``--addr``, the key in SECRETSCTL_API_KEY, no definition or database on
the client's side). ``sync`` starts from nothing each run (lockfile and targets removed), so
every secret is generated and written; ``status`` reads all of them after a sync. The remote
status is one ``GET /status`` (every secret's status) and one rotation check (the due dates);
the requests it made are counted from the audit rows it added. The load average is printed
before and after.

    .venv/bin/python bench/bench_cli_remote.py [--size 1000] [--runs 3] [--workers 2]
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


def _rows(db: Path) -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT count(*) FROM audit_auditentry").fetchone()[0])


def _run(args: list[str], env: dict[str, str], folder: Path, ok: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    done = subprocess.run([SECRETSCTL, *args], cwd=folder, env=env, timeout=900, stdout=subprocess.DEVNULL,
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
        finally:
            server.stop()
    print(f"{args.size} secrets, median of {args.runs} runs, wall seconds (a new secretsctl process each)")
    print(f"{'mode':<8} {'sync':>8} {'status':>8} {'audit rows per status':>22}")
    for mode, figures in results.items():
        print(f"{mode:<8} {figures['sync']:>8.2f} {figures['status']:>8.2f} {figures['rows']:>22.0f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
