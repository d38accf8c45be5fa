"""The shipped reverse proxy (deploy/nginx/) for tests: Debian's nginx, run from a temp folder
with a config derived from the shipped one, in front of a real ``serve`` on loopback.

The derived config changes only what a test run needs: the listening address (an ephemeral
loopback port), the upstream (the test's ``serve``), the pid and temp paths (the temp folder),
no ``user`` (it runs as whoever runs the tests), and, when a test asks, the open-file limit and
connections per worker (kept in the shipped ratio). Every other line is the shipped one.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.processes.live import ROOT, free_port

SHIPPED = ROOT / "deploy" / "nginx"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
START_DEADLINE_S = 10.0


def _replace(text: str, pattern: str, replacement: str) -> str:
    """``pattern`` replaced exactly once: a shipped line the derivation relies on must exist."""
    result, count = re.subn(pattern, replacement, text, flags=re.MULTILINE)
    assert count == 1, f"deploy/nginx: expected one line matching {pattern!r}, found {count}"
    return result


def derive_config(folder: Path, *, port: int, upstream_port: int, open_files: int | None = None) -> Path:
    """Write the test's nginx.conf and secretsapi.conf into ``folder``; returns nginx.conf."""
    main = (SHIPPED / "nginx.conf").read_text()
    main = _replace(main, r"^user .*;$", "")
    main = _replace(main, r"^pid .*;$", f"pid {folder / 'nginx.pid'};")
    temp = "\n".join(f"    {kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi",
                                                                              "uwsgi", "scgi"))
    main = _replace(main, r"^http \{$", "http {\n" + temp)
    if open_files is not None:
        main = _replace(main, r"^worker_rlimit_nofile \d+;$", f"worker_rlimit_nofile {open_files};")
        main = _replace(main, r"^    worker_connections \d+;$", f"    worker_connections {open_files // 2};")
    site = (SHIPPED / "secretsapi.conf").read_text()
    site = _replace(site, r"^    listen 80;$", f"    listen 127.0.0.1:{port};")
    site = _replace(site, r"^    server 127\.0\.0\.1:8000;$", f"    server 127.0.0.1:{upstream_port};")
    (folder / "secretsapi.conf").write_text(site)
    (folder / "nginx.conf").write_text(main)
    return folder / "nginx.conf"


@dataclass
class Proxy:
    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        """What nginx wrote: its output (error_log stderr) and its start-up error log."""
        paths = (self.log_path, self.log_path.with_name("error.log"))
        return "".join(path.read_text(errors="replace") for path in paths if path.exists())

    def worker_pids(self) -> set[int]:
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        return {int(pid) for pid in children}

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


def start_proxy(folder: Path, upstream_port: int, *, open_files: int | None = None) -> Proxy:
    """nginx in the foreground (its own process group), once it accepts connections."""
    if not Path(NGINX).exists():
        pytest.skip("nginx is not installed (Debian package nginx)")
    folder.mkdir(parents=True, exist_ok=True)
    log_path = folder / "nginx.log"
    for _attempt in range(3):
        port = free_port()
        conf = derive_config(folder, port=port, upstream_port=upstream_port, open_files=open_files)
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [NGINX, "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log"), "-g", "daemon off;"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        proxy = Proxy(proc, port, log_path)
        end = time.monotonic() + START_DEADLINE_S
        while time.monotonic() < end and proc.poll() is None and not _listening(port):
            time.sleep(0.05)
        if proc.poll() is None and _listening(port):
            return proxy
        proxy.stop()
        if "Address already in use" not in proxy.log():
            break
    raise AssertionError(f"nginx did not start; its output:\n{proxy.log()[-4000:]}")


@pytest.fixture
def proxies(tmp_path: Path) -> Iterator[Callable[..., Proxy]]:
    """``proxies(upstream_port, open_files=None)`` starts one; every one is killed at teardown."""
    started: list[Proxy] = []

    def start(upstream_port: int, *, open_files: int | None = None) -> Proxy:
        proxy = start_proxy(tmp_path / f"nginx{len(started)}", upstream_port, open_files=open_files)
        started.append(proxy)
        return proxy

    try:
        yield start
    finally:
        for proxy in started:
            proxy.stop()
