"""Slow and greedy clients against the production layout: the shipped nginx (deploy/nginx/) in
front of a real ``serve`` (stock gunicorn, gthread), as docs/operations.md, "Production", runs them.

The attacks (issues 18 and 25): connections sending a header byte a second held every worker
thread; 2,100 one-byte connections made a worker's accept() fail with EMFILE and exit; ~700
half-sent bodies filled a worker's read budget; 2,100 idle connections from one address delayed
/health by 12 s; an HTTP/1.0 POST without Content-Length ran with an empty body. Attackers come
from 127.0.0.2, honest callers from 127.0.0.1 (the proxy limits connections per address).
Waits are bounded to detect a hang, never timed.
"""

from __future__ import annotations

import contextlib
import json
import resource
import selectors
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.processes.live import API_KEY, LiveServer, http, many_secrets, server_env, write_definition
from tests.processes.proxy import Proxy, start_proxy

pytestmark = pytest.mark.slow

ERROR_KEYS = {"error", "detail", "timestamp"}
ATTACKER = "127.0.0.2"
# Generous bound for one /health answer while an attack runs (it takes milliseconds).
PROBE_BOUND_S = 2.0
KEY = f"X-API-Key: {API_KEY}\r\n".encode()


def _serve(folder: Path, servers: Callable[..., LiveServer]) -> LiveServer:
    """Two workers of four threads, as `serve` starts by default, behind the proxy; one secret
    with a local file target (``folder/out``), so a sync that should not have run leaves a file."""
    definition = write_definition(folder, many_secrets(1, files=1))
    env = server_env(data_dir=folder / "data", config=definition, extra={"SERVICE_BEHIND_PROXY": "true"})
    return servers(env, folder / "serve.log", workers=2)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory,
           module_servers: Callable[..., LiveServer]) -> Iterator[tuple[LiveServer, Proxy, Path]]:
    """One server and proxy for the module's tests (~5 s of CPU each to start): the server, the
    proxy and the definition's folder. No test here runs an operation that writes (the ones that
    would, were the proxy broken, assert that ``out`` was not made), and each test's connections
    are closed at its end; the test that lowers the server's open-file limit starts its own."""
    folder = tmp_path_factory.mktemp("proxied")
    server = _serve(folder, module_servers)
    proxy = start_proxy(folder / "nginx", server.port)
    try:
        yield server, proxy, folder
    finally:
        proxy.stop()


@pytest.fixture
def proxy(shared: tuple[LiveServer, Proxy, Path]) -> Proxy:
    return shared[1]


@pytest.fixture
def folder(shared: tuple[LiveServer, Proxy, Path]) -> Path:
    """The shared server's definition folder (its targets go to ``out`` there)."""
    return shared[2]


@pytest.fixture
def sockets() -> Iterator[Callable[..., socket.socket]]:
    """``open_socket(port, source=ATTACKER, blocking=True)``: a raw connection, closed at teardown."""
    with contextlib.ExitStack() as stack:
        def open_socket(port: int, source: str = ATTACKER, *, blocking: bool = True) -> socket.socket:
            sock = stack.enter_context(socket.socket())
            sock.bind((source, 0))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if blocking:
                sock.settimeout(10)
                sock.connect(("127.0.0.1", port))
            else:
                sock.setblocking(False)
                sock.connect_ex(("127.0.0.1", port))
            return sock
        yield open_socket


@pytest.fixture
def many_files() -> Iterator[None]:
    """This process may hold the 2,100 connections of a flood (the soft limit is often 1,024)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 8192 if hard == resource.RLIM_INFINITY else min(hard, 8192)
    if wanted < 4096:
        pytest.skip(f"the open-file limit ({hard}) is too low for a flood of 2,100 connections")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _probe(proxy: Proxy) -> int | str:
    try:
        return http("GET", proxy.url + "/health", timeout=PROBE_BOUND_S)[0]
    except OSError as exc:
        return type(exc).__name__


def _exchange(sock: socket.socket, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``data`` and read one answer until the proxy closes or its body is in."""
    sock.sendall(data)
    received = b""
    while b"\r\n\r\n" not in received and (chunk := sock.recv(65536)):
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value for name, _, value in (line.partition(": ") for line in lines[1:])}
    while len(body) < int(headers.get("content-length", "0")) and (chunk := sock.recv(65536)):
        body += chunk
    return int(lines[0].split()[1]), headers, body


def _wait_healthy(proxy: Proxy, deadline_s: float = 20) -> int | str:
    end = time.monotonic() + deadline_s
    while (status := _probe(proxy)) != 200 and time.monotonic() < end:
        time.sleep(0.2)
    return status


def _worker_pids(server: LiveServer) -> set[int]:
    children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text().split()
    return {int(pid) for pid in children}


def test_health_answers_while_16_connections_send_headers_and_16_bodies_a_byte_at_a_time(
    proxy: Proxy, sockets: Callable[..., socket.socket]
) -> None:
    heads = [sockets(proxy.port) for _ in range(16)]
    bodies = [sockets(proxy.port) for _ in range(16)]
    for sock in heads:
        sock.sendall(b"GET /health HTTP/1.1\r\nHo")
    for sock in bodies:
        sock.sendall(b"POST /sync HTTP/1.1\r\nHost: t\r\n" + KEY
                     + b"Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n{")
    probes = []
    for _ in range(6):
        for sock in (*heads, *bodies):
            sock.sendall(b" " if sock in bodies else b"s")
        probes.append(_probe(proxy))
        time.sleep(0.5)
    assert probes == [200] * 6


def test_a_body_over_the_limit_is_413_with_the_error_body_and_changes_nothing(
    folder: Path, proxy: Proxy, sockets: Callable[..., socket.socket]
) -> None:
    body = json.dumps({"force": True, "padding": "x" * 1_048_576}).encode()
    sock = sockets(proxy.port, "127.0.0.1")
    status, headers, answer = _exchange(sock, b"POST /sync HTTP/1.1\r\nHost: t\r\n" + KEY
                                        + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
    assert status == 413 and headers["content-type"] == "application/json"
    assert set(json.loads(answer)) == ERROR_KEYS
    assert not (folder / "out").exists()


def test_an_http_1_0_post_with_a_body_and_no_length_is_411_and_runs_nothing(
    folder: Path, proxy: Proxy, sockets: Callable[..., socket.socket]
) -> None:
    sock = sockets(proxy.port, "127.0.0.1")
    status, headers, answer = _exchange(sock, b"POST /sync HTTP/1.0\r\nHost: t\r\n" + KEY
                                        + b'Content-Type: application/json\r\n\r\n{"dry_run": true}')
    assert status == 411 and headers["content-type"] == "application/json"
    assert set(json.loads(answer)) == ERROR_KEYS
    assert not (folder / "out").exists()


def test_an_http_1_0_post_with_a_length_is_served(folder: Path, proxy: Proxy,
                                                  sockets: Callable[..., socket.socket]) -> None:
    body = b'{"dry_run": true}'
    sock = sockets(proxy.port, "127.0.0.1")
    status, _, answer = _exchange(sock, b"POST /sync HTTP/1.0\r\nHost: t\r\n" + KEY
                                  + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    assert status == 200, answer
    assert not (folder / "out").exists()  # a dry run


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"GARBAGE\r\n\r\n", 400),
    (b"GET /secrets/" + b"a" * 5000 + b"/status HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    (b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", 400),
])
def test_requests_the_proxy_refuses_itself_get_the_error_body(
    proxy: Proxy, sockets: Callable[..., socket.socket], request_bytes: bytes, status: int
) -> None:
    got, headers, body = _exchange(sockets(proxy.port, "127.0.0.1"), request_bytes)
    assert got == status and headers["content-type"] == "application/json"
    assert set(json.loads(body)) == ERROR_KEYS
    assert b"aaaa" not in body  # the request is never quoted back


def test_2100_one_byte_connections_under_a_low_open_file_limit_crash_no_worker(
    tmp_path: Path, servers: Callable[..., LiveServer], proxies: Callable[..., Proxy],
    sockets: Callable[..., socket.socket], many_files: None
) -> None:
    served = _serve(tmp_path, servers)  # its own: the test lowers its processes' open-file limit
    proxy = proxies(served.port, open_files=1024)
    for pid in (served.proc.pid, *_worker_pids(served)):
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (1024, 1024))
    workers, proxy_workers = _worker_pids(served), proxy.worker_pids()
    flood = [sockets(proxy.port, blocking=False) for _ in range(2100)]
    selector = selectors.DefaultSelector()
    for sock in flood:
        selector.register(sock, selectors.EVENT_WRITE, sock)
    end, pending = time.monotonic() + 5, set(flood)
    while pending and time.monotonic() < end:
        for key, _ in selector.select(timeout=0.2):
            connected: socket.socket = key.data
            with contextlib.suppress(OSError):
                connected.send(b"G")
            selector.unregister(connected)
            pending.discard(connected)
    selector.close()
    # The flood met the proxy's connection limit (not the open-file limit) ...
    assert "worker_connections are not enough" in proxy.log()
    for sock in flood:
        sock.close()
    # ... and once it is gone everything answers, with the same processes.
    assert _wait_healthy(proxy) == 200
    assert _worker_pids(served) == workers and proxy.worker_pids() == proxy_workers
    assert "Too many open files" not in served.log() + proxy.log()


def test_700_half_sent_bodies_from_one_client_do_not_starve_an_honest_upload(
    proxy: Proxy, sockets: Callable[..., socket.socket]
) -> None:
    head = (b"POST /sync HTTP/1.1\r\nHost: t\r\n" + KEY
            + b"Content-Type: application/json\r\nContent-Length: 65536\r\n\r\n")
    for _ in range(700):
        with contextlib.suppress(OSError):
            sockets(proxy.port).sendall(head + b" " * 4096)
    honest = sockets(proxy.port, "127.0.0.1")
    body = b'{"dry_run": true}'
    honest.sendall(b"POST /sync HTTP/1.1\r\nHost: t\r\n" + KEY
                   + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
    time.sleep(0.2)  # the body arrives in a second segment
    status, _, answer = _exchange(honest, body)
    assert status == 200, answer


def test_2100_idle_connections_from_one_address_leave_health_answering(
    proxy: Proxy, sockets: Callable[..., socket.socket], many_files: None
) -> None:
    for _ in range(2100):
        sockets(proxy.port, blocking=False)  # held open until the test ends
    time.sleep(0.5)  # the proxy has accepted them
    assert [_probe(proxy) for _ in range(5)] == [200] * 5
