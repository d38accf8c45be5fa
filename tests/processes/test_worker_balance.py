"""Connections spread over gunicorn's workers: a worker with every thread busy accepts none.

Which worker holds a connection is read from the kernel: the server side of each client
connection is a socket inode in /proc/net/tcp, found among one worker's descriptors. A thread
is busy with a request, not with a connection (a worker's event loop reads requests): each
busy connection here sends a sync that waits for the lockfile lock, which the test holds.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import filelock
import pytest

from tests.processes.live import API_KEY, LiveServer, many_secrets, server_env, socket_inodes, write_definition

pytestmark = pytest.mark.slow

WORKERS = 2
THREADS = 2
# How long a connection is given to be accepted (and its request read) by a worker.
SETTLE_S = 1.0
SYNC = (f"POST /sync HTTP/1.1\r\nHost: t\r\nX-API-Key: {API_KEY}\r\nContent-Type: application/json\r\n"
        "Content-Length: 2\r\nConnection: close\r\n\r\n{}").encode()


def _worker_pids(server: LiveServer) -> list[int]:
    # serve exec's into gunicorn's master, so the process started is the master.
    text = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text()
    return [int(pid) for pid in text.split()]



def _server_side(server_port: int, client_port: int) -> tuple[str, int]:
    """The inode of the server's socket for this connection ("0" while it waits to be
    accepted), and how many received bytes wait in it to be read."""
    local, remote = f"0100007F:{server_port:04X}", f"0100007F:{client_port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == local and fields[2] == remote:
            return fields[9], int(fields[4].split(":")[1], 16)
    raise AssertionError(f"no server side for client port {client_port}")


def _holder(server: LiveServer, client: socket.socket) -> int | None:
    """The worker that accepted ``client`` and read what it sent, waiting up to SETTLE_S; None
    if none did."""
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        inode, unread = _server_side(server.port, client.getsockname()[1])
        if inode != "0" and not unread:
            for pid in _worker_pids(server):
                if inode in socket_inodes(pid):
                    return pid
        time.sleep(0.02)
    return None


@pytest.fixture
def server(tmp_path: Path, servers: Callable[..., LiveServer]) -> LiveServer:
    definition = write_definition(tmp_path, many_secrets(3, files=1))
    env = server_env(data_dir=tmp_path / "data", config=definition, lockfile=tmp_path / "secrets.lock",
                     extra={"SERVICE_THREADS": str(THREADS)})
    return servers(env, tmp_path / "serve.log", workers=WORKERS)


@pytest.fixture
def lock_held(tmp_path: Path) -> Iterator[filelock.BaseFileLock]:
    """The lockfile lock (a kernel lock on ``<lockfile>.lck``): every sync waits for it."""
    lock = filelock.FileLock(str(tmp_path / "secrets.lock.lck"))
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()


@pytest.fixture
def connect(server: LiveServer) -> Iterator[Callable[[], socket.socket]]:
    with ExitStack() as stack:
        def open_one() -> socket.socket:
            return stack.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10))
        yield open_one


def _busy(client: socket.socket) -> socket.socket:
    client.sendall(SYNC)
    return client


def _answer(client: socket.socket) -> bytes:
    """The status line of the answer to what ``client`` sent."""
    answer = b""
    while chunk := client.recv(65536):
        answer += chunk
    # Closed at once: gunicorn's worker lingers (up to 2 s) until the client closes its side.
    client.close()
    return answer.split(b"\r\n", 1)[0]


def test_busy_connections_are_spread_over_the_workers(
    server: LiveServer, connect: Callable[[], socket.socket], lock_held: filelock.BaseFileLock
) -> None:
    holders = []
    for _ in range(WORKERS * THREADS):
        holders.append(_holder(server, _busy(connect())))
    assert sorted(holders.count(pid) for pid in _worker_pids(server)) == [THREADS] * WORKERS


def test_a_connection_waits_in_the_queue_while_every_thread_is_busy_and_is_then_served(
    server: LiveServer, connect: Callable[[], socket.socket], lock_held: filelock.BaseFileLock
) -> None:
    busy = [_busy(connect()) for _ in range(WORKERS * THREADS)]
    for client in busy:
        assert _holder(server, client) is not None
    waiting = connect()
    waiting.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    assert _holder(server, waiting) is None
    lock_held.release()
    # Every connection, the queued one included, gets its answer once threads come free.
    assert [_answer(client) for client in [*busy, waiting]] == [b"HTTP/1.1 200 OK"] * (len(busy) + 1)
