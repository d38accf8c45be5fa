"""The shipped reverse proxy (deploy/nginx/) for tests: Debian's nginx, run from a temp folder
with a config derived from the shipped one, in front of a real ``serve`` on loopback.

The derived config changes only what a test run needs: the listening addresses (ephemeral
loopback ports for the HTTPS and the plain-HTTP server), the upstream (the test's ``serve``, on
a port or its socket), the paths of the certificate, the ACME webroot, the pid and temp files
(the temp folder, with a certificate a test CA signed for localhost and 127.0.0.1), no ``user``
(it runs as whoever runs the tests), and, when a test asks, the open-file limit and connections
per worker (kept in the shipped ratio). Every other line is the shipped one. ``tls=False`` serves
the HTTPS server's locations over plain HTTP, for the tests of slow and greedy clients that
speak raw HTTP/1.x on a socket.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.processes.live import ROOT, free_port, listens_on

SHIPPED = ROOT / "deploy" / "nginx"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
START_DEADLINE_S = 10.0


def _replace(text: str, pattern: str, replacement: str) -> str:
    """``pattern`` replaced exactly once: a shipped line the derivation relies on must exist."""
    result, count = re.subn(pattern, replacement, text, flags=re.MULTILINE)
    assert count == 1, f"deploy/nginx: expected one line matching {pattern!r}, found {count}"
    return result


def make_certificate(folder: Path) -> Path:
    """A test CA (``ca.pem``) and a certificate it signed for localhost and 127.0.0.1, as the
    shipped config names them (``fullchain.pem``, ``privkey.pem``); returns the CA's file."""
    folder.mkdir(parents=True, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", *ec, "-days", "2", "-subj", "/CN=secretsapi test CA", "-keyout", "ca.key",
            "-out", "ca.pem")
    openssl("req", *ec, "-subj", "/CN=localhost", "-keyout", "privkey.pem", "-out", "server.csr")
    (folder / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-extfile", "san.ext", "-out", "fullchain.pem")
    return folder / "ca.pem"


def derive_config(folder: Path, *, port: int, upstream_port: int | None = None, upstream_socket: Path | None = None,
                  http_port: int | None = None, tls: bool = True, open_files: int | None = None) -> Path:
    """Write the test's nginx.conf, secretsapi.conf and secretsapi-errors.conf into ``folder``
    (with a certificate in ``folder/tls``); returns nginx.conf."""
    main = (SHIPPED / "nginx.conf").read_text()
    # Workers run as the test's user: pytest's temp folders (the socket's, the certificate's) are
    # 0700. As root nginx would otherwise pick `nobody`.
    main = _replace(main, r"^user .*;$", "user root;" if os.geteuid() == 0 else "")
    main = _replace(main, r"^pid .*;$", f"pid {folder / 'nginx.pid'};")
    temp = "\n".join(f"    {kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi",
                                                                              "uwsgi", "scgi"))
    main = _replace(main, r"^http \{$", "http {\n" + temp)
    if open_files is not None:
        main = _replace(main, r"^worker_rlimit_nofile \d+;$", f"worker_rlimit_nofile {open_files};")
        main = _replace(main, r"^    worker_connections \d+;$", f"    worker_connections {open_files // 2};")
    if not (folder / "tls" / "fullchain.pem").exists():
        make_certificate(folder / "tls")
    site = (SHIPPED / "secretsapi.conf").read_text()
    site = _replace(site, r"^    listen 80;$", f"    listen 127.0.0.1:{http_port or free_port()};")
    site = _replace(site, r"^    listen 443 ssl http2;$",
                    f"    listen 127.0.0.1:{port} ssl http2;" if tls else f"    listen 127.0.0.1:{port};")
    upstream = f"unix:{upstream_socket}" if upstream_socket is not None else f"127.0.0.1:{upstream_port}"
    site = _replace(site, r"^    server unix:/run/secretsapi/web\.sock;$", f"    server {upstream};")
    site = _replace(site, r"^    ssl_certificate /etc/secretsapi/tls/fullchain\.pem;$",
                    f"    ssl_certificate {folder / 'tls' / 'fullchain.pem'};")
    site = _replace(site, r"^    ssl_certificate_key /etc/secretsapi/tls/privkey\.pem;$",
                    f"    ssl_certificate_key {folder / 'tls' / 'privkey.pem'};")
    site = _replace(site, r"^        root /var/www/secretsapi-acme;$", f"        root {folder / 'acme'};")
    (folder / "secretsapi.conf").write_text(site)
    (folder / "secretsapi-errors.conf").write_text((SHIPPED / "secretsapi-errors.conf").read_text())
    (folder / "nginx.conf").write_text(main)
    return folder / "nginx.conf"


@dataclass
class Proxy:
    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path
    http_port: int = 0
    tls: bool = False

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def http_url(self) -> str:
        """The plain-HTTP server's (ACME challenges and the redirect)."""
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def ca(self) -> Path:
        """The test CA that signed the proxy's certificate."""
        return self.log_path.parent / "tls" / "ca.pem"

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


def _started(proxy: Proxy) -> bool:
    """Our nginx listening on both ports (its master holds both sockets): another test's nginx may
    listen on a port ours was given, while ours is still retrying to bind it."""
    return listens_on(proxy.proc.pid, proxy.port) and listens_on(proxy.proc.pid, proxy.http_port)


def start_proxy(folder: Path, upstream_port: int | None = None, *, upstream_socket: Path | None = None,
                tls: bool = False, open_files: int | None = None) -> Proxy:
    """nginx in the foreground (its own process group), once it accepts connections on both ports."""
    if not Path(NGINX).exists():
        pytest.skip("nginx is not installed (Debian package nginx)")
    folder.mkdir(parents=True, exist_ok=True)
    log_path = folder / "nginx.log"
    for _attempt in range(3):
        port, http_port = free_port(), free_port()
        conf = derive_config(folder, port=port, http_port=http_port, upstream_port=upstream_port,
                             upstream_socket=upstream_socket, tls=tls, open_files=open_files)
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [NGINX, "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log"), "-g", "daemon off;"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        proxy = Proxy(proc, port, log_path, http_port, tls)
        end = time.monotonic() + START_DEADLINE_S
        while time.monotonic() < end and proc.poll() is None and not _started(proxy):
            time.sleep(0.05)
        if proc.poll() is None and _started(proxy):
            return proxy
        proxy.stop()
        if "Address already in use" not in proxy.log():
            break
    raise AssertionError(f"nginx did not start; its output:\n{proxy.log()[-4000:]}")


@pytest.fixture
def proxies(tmp_path: Path) -> Iterator[Callable[..., Proxy]]:
    """``proxies(upstream_port, upstream_socket=None, tls=False, open_files=None)`` starts one; every
    one is killed at teardown."""
    started: list[Proxy] = []

    def start(upstream_port: int | None = None, **options: Any) -> Proxy:
        proxy = start_proxy(tmp_path / f"nginx{len(started)}", upstream_port, **options)
        started.append(proxy)
        return proxy

    try:
        yield start
    finally:
        for proxy in started:
            proxy.stop()
