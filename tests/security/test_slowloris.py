"""Slow clients cannot starve a real ``serve``: requests are read by each worker's event loop
with a deadline (SERVICE_REQUEST_READ_TIMEOUT) before a thread is given to them.

The attack (issue 18): connections sending one header byte a second held every worker thread,
and /health answered nothing for 40 s. Waits here are bounded to detect a hang, never timed.
"""

from __future__ import annotations

import contextlib
import json
import selectors
import socket
import time
from collections.abc import Callable, Iterator
from http.client import HTTPConnection
from pathlib import Path
from typing import BinaryIO

import pytest

from tests.processes.live import API_KEY, LiveServer, http, server_env, write_definition

pytestmark = pytest.mark.slow

# Generous bound for one /health answer while an attack runs (it takes milliseconds).
PROBE_BOUND_S = 2.0
KEY = f"X-API-Key: {API_KEY}\r\n".encode()


def _server(tmp_path: Path, servers: Callable[..., LiveServer], *, workers: int, **settings: str) -> LiveServer:
    definition = write_definition(tmp_path, {"version": "1.0", "secrets": []})
    env = server_env(data_dir=tmp_path / "data", config=definition, extra=settings)
    return servers(env, tmp_path / "serve.log", workers=workers)


@pytest.fixture
def server(tmp_path: Path, servers: Callable[..., LiveServer]) -> LiveServer:
    """Two workers of four threads (eight in all), as `serve` starts by default."""
    return _server(tmp_path, servers, workers=2)


@pytest.fixture
def impatient_server(tmp_path: Path, servers: Callable[..., LiveServer]) -> LiveServer:
    return _server(tmp_path, servers, workers=1, SERVICE_REQUEST_READ_TIMEOUT="2")


@pytest.fixture
def connect() -> Iterator[Callable[[LiveServer], socket.socket]]:
    """``connect(server)``: a raw connection, closed at teardown."""
    with contextlib.ExitStack() as stack:
        def open_one(target: LiveServer) -> socket.socket:
            sock = stack.enter_context(socket.create_connection(("127.0.0.1", target.port), timeout=10))
            # Every send() leaves as its own packet.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        yield open_one


def _probe(server: LiveServer) -> int | str:
    try:
        return http("GET", server.url + "/health", timeout=PROBE_BOUND_S)[0]
    except OSError as exc:
        return type(exc).__name__


def _read_response(stream: BinaryIO) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response (with a Content-Length) from ``stream``; interim 1xx are skipped."""
    while True:
        status = int(stream.readline().split()[1])
        headers = {}
        while (line := stream.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if status >= 200:
            return status, headers, stream.read(int(headers.get("content-length", "0")))


def _request(method: str, path: str, body: bytes = b"", extra: bytes = b"") -> bytes:
    length = f"Content-Length: {len(body)}\r\nContent-Type: application/json\r\n".encode() if body else b""
    return f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + KEY + length + extra + b"\r\n" + body


def _validate_body(secrets: int) -> bytes:
    """A /config/validate body: answered 200 with valid=true only if every byte of it arrived."""
    names = [{"name": f"slow_body_secret_{i}", "kind": "random_password"} for i in range(secrets)]
    return json.dumps({"config": {"version": "1.0", "secrets": names}}).encode()


def _closed_by_server(sock: socket.socket, deadline_s: float) -> bool:
    """Whether the server closes ``sock`` (EOF or reset) within the bound, draining its answer."""
    sock.settimeout(0.5)
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            if not sock.recv(65536):
                return True
        except TimeoutError:
            continue
        except ConnectionResetError:
            return True
    return False


def test_health_answers_while_16_connections_send_their_headers_a_byte_a_second(
    server: LiveServer, connect: Callable[[LiveServer], socket.socket]
) -> None:
    slow = [connect(server) for _ in range(16)]
    head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"z" * 64
    probes: list[int | str] = []
    for second in range(12):
        for sock in slow:
            # Past the read deadline the server answers 408 and closes: later bytes may fail.
            with contextlib.suppress(OSError):
                sock.send(head[second:second + 1])
        probes.append(_probe(server))
        if probes[-1] != 200:
            break
        time.sleep(1)
    assert probes == [200] * 12


def test_a_request_still_arriving_at_the_deadline_is_answered_408_and_closed(
    impatient_server: LiveServer, connect: Callable[[LiveServer], socket.socket]
) -> None:
    sock = connect(impatient_server)
    head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"z" * 200
    answer = b""
    sock.settimeout(0.25)
    end = time.monotonic() + 10
    for byte in head:
        if time.monotonic() > end:
            break
        try:
            sock.send(bytes([byte]))
            answer += sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            break
        if answer.endswith(b"}"):
            break
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line == b"HTTP/1.1 408 Request Timeout"
    assert b"SERVICE_REQUEST_READ_TIMEOUT" in rest
    assert _closed_by_server(sock, 5)


def test_a_body_that_does_not_arrive_by_the_deadline_is_answered_408(
    impatient_server: LiveServer, connect: Callable[[LiveServer], socket.socket]
) -> None:
    sock = connect(impatient_server)
    body = _validate_body(1)
    sock.sendall(_request("POST", "/config/validate", body)[:-10])
    sock.settimeout(10)
    status, headers, detail = _read_response(sock.makefile("rb"))
    assert (status, headers["connection"]) == (408, "close")
    assert b"SERVICE_REQUEST_READ_TIMEOUT" in detail


def test_a_connection_that_never_sends_is_closed_at_the_deadline(
    impatient_server: LiveServer, connect: Callable[[LiveServer], socket.socket]
) -> None:
    sock = connect(impatient_server)
    assert _closed_by_server(sock, 10)


def test_a_request_sent_one_byte_per_packet_within_the_deadline_is_answered(
    server: LiveServer, connect: Callable[[LiveServer], socket.socket]
) -> None:
    sock = connect(server)
    for byte in _request("GET", "/health", extra=b"Connection: close\r\n"):
        sock.send(bytes([byte]))
        time.sleep(0.005)
    assert _read_response(sock.makefile("rb"))[0] == 200


def test_a_body_arriving_slowly_within_the_deadline_is_read_whole(
    server: LiveServer, connect: Callable[[LiveServer], socket.socket]
) -> None:
    body = _validate_body(200)
    sock = connect(server)
    sock.sendall(_request("POST", "/config/validate", body)[:-len(body)])
    for start in range(0, len(body), len(body) // 20 + 1):
        sock.send(body[start:start + len(body) // 20 + 1])
        time.sleep(0.1)
    status, _, answer = _read_response(sock.makefile("rb"))
    assert (status, json.loads(answer)["valid"]) == (200, True)


def test_a_client_expecting_100_continue_gets_it_then_its_answer(
    server: LiveServer, connect: Callable[[LiveServer], socket.socket]
) -> None:
    body = _validate_body(1)
    sock = connect(server)
    sock.sendall(_request("POST", "/config/validate", body, extra=b"Expect: 100-continue\r\n")[:-len(body)])
    stream = sock.makefile("rb")
    assert stream.readline() == b"HTTP/1.1 100 Continue\r\n"
    assert stream.readline() == b"\r\n"
    sock.sendall(body)
    status, _, answer = _read_response(stream)
    assert (status, json.loads(answer)["valid"]) == (200, True)


def test_keep_alive_serves_several_requests_on_one_connection(server: LiveServer) -> None:
    client = HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        statuses, local_ports = [], set()
        for path in ["/health", "/secrets", "/health", "/secrets", "/health"]:
            client.request("GET", path, headers={"X-API-Key": API_KEY})
            response = client.getresponse()
            response.read()
            statuses.append(response.status)
            # http.client opens a new connection if the server closed the last one.
            local_ports.add(client.sock.getsockname()[1])
        assert statuses == [200] * 5
        assert len(local_ports) == 1
    finally:
        client.close()


def test_pipelined_requests_are_answered_in_order(
    server: LiveServer, connect: Callable[[LiveServer], socket.socket]
) -> None:
    sock = connect(server)
    sock.sendall(
        _request("GET", "/health")
        + _request("POST", "/config/validate", _validate_body(3))
        + _request("GET", "/secrets", extra=b"Connection: close\r\n")
    )
    stream = sock.makefile("rb")
    answers = [_read_response(stream) for _ in range(3)]
    assert [status for status, _, _ in answers] == [200, 200, 200]
    assert json.loads(answers[0][2])["status"] == "healthy"
    assert json.loads(answers[1][2])["valid"] is True
    assert _closed_by_server(sock, 5)


def test_clients_that_do_not_close_after_their_answer_hold_up_no_one(
    tmp_path: Path, servers: Callable[..., LiveServer], connect: Callable[[LiveServer], socket.socket]
) -> None:
    # The server half-closes after a "Connection: close" answer and waits (up to 2 s) for the
    # client's FIN: that wait must not stop the worker serving anyone else. One worker with a
    # thread per client, so all eight are answered at once and then closed together.
    server = _server(tmp_path, servers, workers=1, SERVICE_THREADS="8")
    lingering = [connect(server) for _ in range(8)]
    for sock in lingering:
        sock.sendall(_request("GET", "/health", extra=b"Connection: close\r\n"))
    for sock in lingering:
        assert _read_response(sock.makefile("rb"))[0] == 200
    # Probed for a while: the eight closings take 2 s each if they are waited for one by one.
    probes = []
    for _ in range(8):
        probes.append(_probe(server))
        time.sleep(0.25)
    assert probes == [200] * 8


def test_a_head_larger_than_gunicorn_accepts_is_refused_with_431(
    server: LiveServer, connect: Callable[[LiveServer], socket.socket]
) -> None:
    sock = connect(server)
    # gunicorn's default bounds allow about 823 KB (100 fields of 8190 bytes): this is 832 KB,
    # little enough past them that the server reads it all before answering.
    sock.sendall(b"GET /health HTTP/1.1\r\n" + b"X-A: b\r\n" * 104_000)
    status, headers, body = _read_response(sock.makefile("rb"))
    assert (status, headers["connection"], json.loads(body)["error"]) == (
        431, "close", "Request header fields too large")


def test_partial_bodies_past_the_worker_s_read_budget_are_refused_with_503(
    tmp_path: Path, servers: Callable[..., LiveServer], connect: Callable[[LiveServer], socket.socket]
) -> None:
    # A worker holds at most 64 MiB of requests it is still reading: 70 connections each
    # sending all but the last bytes of a 1,000,000-byte body would hold 70 MB.
    server = _server(tmp_path, servers, workers=1)
    head = _request("POST", "/config/validate", b"x" * 1_000_000)[:-1_000_000]
    clients = [connect(server) for _ in range(70)]
    for sock in clients:
        with contextlib.suppress(OSError):  # the server may answer and close before the end
            sock.sendall(head + b"x" * 999_000)
    refused = 0
    with selectors.DefaultSelector() as selector:
        for sock in clients:
            selector.register(sock, selectors.EVENT_READ)
        for key, _ in selector.select(timeout=10):
            answered = key.fileobj
            assert isinstance(answered, socket.socket)
            answered.settimeout(5)
            refused += _read_response(answered.makefile("rb"))[0] == 503
    assert refused >= 1
    assert _probe(server) == 200
