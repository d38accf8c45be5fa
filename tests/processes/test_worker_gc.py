"""A served worker's garbage collection (project/gc_policy.py): a status read parses the
definition and the lockfile into caches, which are frozen; once the worker has served nothing
for IDLE_S, its event loop collects everything once, and says so in the log."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from project import gc_policy
from tests.processes.live import LiveServer, many_secrets, server_env, write_definition

pytestmark = pytest.mark.slow

IDLE_LINE = "garbage collection: full pass (the worker is idle)"


def _wait_for_line(server: LiveServer, line: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if line in server.log():
            return True
        time.sleep(0.1)
    return False


def test_an_idle_worker_collects_what_its_caches_froze(tmp_path: Path, servers: Callable[..., LiveServer]) -> None:
    definition = write_definition(tmp_path, many_secrets(20, files=2))
    env = server_env(data_dir=tmp_path / "data", config=definition, lockfile=tmp_path / "secrets.lock")
    server = servers(env, tmp_path / "serve.log", workers=1)
    assert server.call("POST", "/sync", {})[0] == 200
    assert IDLE_LINE not in server.log()
    assert server.call("GET", "/secrets/s0/status")[0] == 200
    assert _wait_for_line(server, IDLE_LINE, gc_policy.IDLE_S + 5), server.log()[-2000:]


def test_a_busy_worker_does_not_pause_for_it(tmp_path: Path, servers: Callable[..., LiveServer]) -> None:
    definition = write_definition(tmp_path, many_secrets(20, files=2))
    env = server_env(data_dir=tmp_path / "data", config=definition, lockfile=tmp_path / "secrets.lock")
    server = servers(env, tmp_path / "serve.log", workers=1)
    assert server.call("POST", "/sync", {})[0] == 200
    # A request at least every IDLE_S / 4, for twice IDLE_S: never idle long enough.
    until = time.monotonic() + 2 * gc_policy.IDLE_S
    while time.monotonic() < until:
        assert server.call("GET", "/secrets/s0/status")[0] == 200
        time.sleep(gc_policy.IDLE_S / 4)
    assert IDLE_LINE not in server.log()
