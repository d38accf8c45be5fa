"""Debian's MariaDB for tests: a private server per test session, its data folder made by
mariadb-install-db in a temp folder, on a random loopback port, run as the current user, stopped
at the end. Its root account has no password and is reached only from 127.0.0.1."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from tests.processes.live import free_port
from tests.tools import require

START_DEADLINE_S = 60.0


def start(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The server process and its admin URL (``mysql://root@127.0.0.1:<port>/``), once it answers."""
    import pymysql

    server = require("mariadbd")
    install = shutil.which("mariadb-install-db") or "/usr/bin/mariadb-install-db"  # same package
    user = ["--user=" + pwd.getpwuid(os.geteuid()).pw_name] if os.geteuid() == 0 else []
    data = folder / "data"
    subprocess.run([install, "--no-defaults", f"--datadir={data}", "--auth-root-authentication-method=normal",
                    "--skip-test-db", *user], check=True, capture_output=True, timeout=120)
    port = free_port()
    proc = subprocess.Popen(
        [server, "--no-defaults", f"--datadir={data}", f"--socket={folder / 'mysqld.sock'}", f"--port={port}",
         "--bind-address=127.0.0.1", "--skip-name-resolve", "--skip-log-bin", f"--pid-file={folder / 'pid'}",
         f"--log-error={folder / 'error.log'}", *user],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    deadline = time.monotonic() + START_DEADLINE_S
    while True:
        try:
            pymysql.connect(host="127.0.0.1", port=port, user="root", connect_timeout=2).close()
            break
        except pymysql.err.OperationalError:
            if proc.poll() is not None or time.monotonic() > deadline:
                stop(proc)
                log = (folder / "error.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"MariaDB did not start on port {port}: {log}") from None
            time.sleep(0.2)
    return proc, f"mysql://root@127.0.0.1:{port}/"


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def running(folder: Path) -> Iterator[str]:
    proc, url = start(folder)
    try:
        yield url
    finally:
        stop(proc)
