"""Connections spread over gunicorn's workers: a worker with every thread busy accepts none.

Which worker holds a connection is read from the kernel: the server side of each client
connection is a socket inode in /proc/net/tcp, found among one worker's descriptors.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.processes.live import LiveServer, many_secrets, server_env, write_definition

pytestmark = pytest.mark.slow

WORKERS = 2
THREADS = 2
# A new connection keeps a thread while gunicorn waits up to 5 s for its first bytes; every
# step below finishes well inside that, so the threads stay busy throughout.
SETTLE_S = 1.0


def _worker_pids(server: LiveServer) -> list[int]:
    # serve exec's into gunicorn's master, so the process started is the master.
    text = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text()
    return [int(pid) for pid in text.split()]


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def _server_side_inode(server_port: int, client_port: int) -> str:
    """The inode of the server's socket for this connection; "0" while it waits to be accepted."""
    local, remote = f"0100007F:{server_port:04X}", f"0100007F:{client_port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == local and fields[2] == remote:
            return fields[9]
    raise AssertionError(f"no server side for client port {client_port}")


def _holder(server: LiveServer, client: socket.socket) -> int | None:
    """The worker that accepted ``client``, waiting up to SETTLE_S; None if none did."""
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        inode = _server_side_inode(server.port, client.getsockname()[1])
        if inode != "0":
            for pid in _worker_pids(server):
                if inode in _socket_inodes(pid):
                    return pid
        time.sleep(0.02)
    return None


@pytest.fixture
def server(tmp_path: Path, servers: Callable[..., LiveServer]) -> LiveServer:
    definition = write_definition(tmp_path, many_secrets(3, files=1))
    env = server_env(data_dir=tmp_path / "data", config=definition, extra={"SERVICE_THREADS": str(THREADS)})
    return servers(env, tmp_path / "serve.log", workers=WORKERS)


@pytest.fixture
def connect(server: LiveServer) -> Iterator[Callable[[], socket.socket]]:
    with ExitStack() as stack:
        def open_one() -> socket.socket:
            return stack.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10))
        yield open_one


def _get_health(client: socket.socket) -> bytes:
    client.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    answer = b""
    while chunk := client.recv(65536):
        answer += chunk
    # Closed at once: gunicorn's worker lingers (up to 2 s) until the client closes its side.
    client.close()
    return answer.split(b"\r\n", 1)[0]


def test_connections_opened_together_are_spread_over_the_workers(
    server: LiveServer, connect: Callable[[], socket.socket]
) -> None:
    holders = []
    for _ in range(WORKERS * THREADS):
        holders.append(_holder(server, connect()))
    assert sorted(holders.count(pid) for pid in _worker_pids(server)) == [THREADS] * WORKERS


def test_a_connection_waits_in_the_queue_while_every_thread_is_busy_and_is_then_served(
    server: LiveServer, connect: Callable[[], socket.socket]
) -> None:
    busy = [connect() for _ in range(WORKERS * THREADS)]
    for client in busy:
        assert _holder(server, client) is not None
    waiting = connect()
    assert _holder(server, waiting) is None
    # Every connection, the queued one included, gets its answer once threads come free.
    assert [_get_health(client) for client in [*busy, waiting]] == [b"HTTP/1.1 200 OK"] * (len(busy) + 1)
