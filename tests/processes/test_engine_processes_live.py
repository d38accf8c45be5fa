"""A served worker's engine process: it holds the write's locks (PostgreSQL advisory locks on
its own connection), and its death is a 503 with an audit row while the worker lives on."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.processes.live import LiveServer, pg_rows, server_env, socket_inodes, sqlite_rows, write_definition

pytestmark = pytest.mark.slow


def children(pid: int) -> list[int]:
    """Children of every thread of ``pid`` (a process started by a request thread is that thread's)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return sorted(found)


def engine_process(server: LiveServer) -> tuple[int, int]:
    """(worker pid, its engine process's pid) of a one-worker server."""
    (worker,) = children(server.proc.pid)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for pid in children(worker):
            with_args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if any(b"spawn_main" in arg for arg in with_args):
                return worker, pid
        time.sleep(0.1)
    raise AssertionError("the worker started no engine process")


def slow_definition(root: Path, marker: Path) -> Path:
    # The script runs under the write's locks: it signals, then outlives the test's checks.
    return write_definition(root, {"version": "1.0", "secrets": [
        {"name": "slow", "kind": "script",
         "config": {"command": f"touch {marker} && sleep 8 && echo value", "shell": True, "timeout": 60},
         "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/slow.env"}}]},
    ]})


def quick_definition(root: Path) -> Path:
    return write_definition(root, {"version": "1.0", "secrets": [
        {"name": "db", "kind": "random_hex",
         "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/db.env"}}]},
    ]})


def wait_for(check: Callable[[], bool], what: str, limit_s: float = 30) -> None:
    deadline = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def sync_in_background(server: LiveServer) -> tuple[threading.Thread, dict[str, Any]]:
    answer: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: answer.update(r=server.call("POST", "/sync", {})))
    thread.start()
    return thread, answer



def local_port_inodes() -> dict[int, str]:
    """Local TCP port -> socket inode, for every IPv4 and IPv6 socket of this host."""
    ports = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            ports[int(fields[1].rsplit(":", 1)[1], 16)] = fields[9]
    return ports


def test_a_killed_engine_process_answers_503_with_its_row_and_the_worker_serves_on(
    tmp_path: Path, servers: Callable[..., LiveServer]
) -> None:
    marker = tmp_path / "started"
    definition = slow_definition(tmp_path, marker)
    server = servers(server_env(data_dir=tmp_path / "data", config=definition,
                                extra={"SERVICE_ALLOW_SCRIPTS": "true"}), tmp_path / "serve.log", workers=1)
    worker, engine = engine_process(server)
    thread, answer = sync_in_background(server)
    wait_for(marker.exists, "the script started")

    os.kill(engine, signal.SIGKILL)
    thread.join(30)

    status, body = answer["r"]
    assert status == 503 and "engine process" in body["detail"], body
    rows = sqlite_rows(tmp_path / "data" / "service.sqlite3",
                       "SELECT success, details FROM audit_auditentry WHERE action = 'sync'")
    assert len(rows) == 1 and rows[0][0] == 0 and '"error": "engine_process_died"' in rows[0][1]
    quick_definition(tmp_path)
    status, body = server.call("POST", "/sync", {})
    assert status == 200 and body["secrets_generated"] == ["db"], body
    assert children(server.proc.pid) == [worker]
    assert engine_process(server)[1] != engine


@pytest.mark.postgres
def test_the_engine_process_holds_the_advisory_locks_and_they_die_with_it(
    tmp_path: Path, pg_database: str, servers: Callable[..., LiveServer]
) -> None:
    marker = tmp_path / "started"
    definition = slow_definition(tmp_path, marker)
    server = servers(server_env(data_dir=tmp_path / "data", config=definition, database_url=pg_database,
                                extra={"SERVICE_ALLOW_SCRIPTS": "true"}), tmp_path / "serve.log", workers=1)
    worker, engine = engine_process(server)
    thread, answer = sync_in_background(server)
    wait_for(marker.exists, "the script started")

    holders = pg_rows(pg_database, "SELECT a.client_port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                                   "WHERE l.locktype = 'advisory' AND l.granted")
    assert holders, "the sync holds no advisory lock"
    ports = local_port_inodes()
    engine_sockets, worker_sockets = socket_inodes(engine), socket_inodes(worker)
    assert all(ports[port] in engine_sockets and ports[port] not in worker_sockets for (port,) in holders)

    os.kill(engine, signal.SIGKILL)
    thread.join(30)
    assert answer["r"][0] == 503
    wait_for(lambda: not pg_rows(pg_database, "SELECT 1 FROM pg_locks WHERE locktype = 'advisory'"),
             "the advisory locks were released")
    quick_definition(tmp_path)
    status, body = server.call("POST", "/sync", {})
    assert status == 200 and body["secrets_generated"] == ["db"], body
    assert children(server.proc.pid) == [worker]


def test_a_graceful_stop_lets_the_running_sync_finish_in_its_engine_process(
    tmp_path: Path, servers: Callable[..., LiveServer]
) -> None:
    marker = tmp_path / "started"
    definition = write_definition(tmp_path, {"version": "1.0", "secrets": [
        {"name": "slow", "kind": "script",
         "config": {"command": f"touch {marker} && sleep 2 && echo value", "shell": True, "timeout": 60},
         "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/slow.env"}}]},
    ]})
    server = servers(server_env(data_dir=tmp_path / "data", config=definition,
                                extra={"SERVICE_ALLOW_SCRIPTS": "true"}), tmp_path / "serve.log", workers=1)
    thread, answer = sync_in_background(server)
    wait_for(marker.exists, "the script started")

    os.killpg(server.proc.pid, signal.SIGTERM)  # as a service manager stops the whole group
    thread.join(40)

    status, body = answer["r"]
    assert status == 200 and body["secrets_generated"] == ["slow"], body
    assert server.proc.wait(timeout=40) == 0
