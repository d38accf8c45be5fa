"""Two ``serve`` instances on one PostgreSQL database refuse a named key right after its revocation."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.processes.live import ROOT, LiveServer, http, many_secrets, server_env, write_definition

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def _apikey(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", "apikey", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip()


def _statuses(servers: tuple[LiveServer, ...], key: str, calls: int = 8) -> set[int]:
    """Several calls per instance, so each of its workers is likely asked."""
    return {http("GET", server.url + "/secrets", headers={"X-API-Key": key})[0]
            for server in servers for _ in range(calls)}


def test_both_instances_refuse_a_named_key_right_after_it_is_revoked(
    tmp_path: Path, pg_database: str, servers: Callable[..., LiveServer]
) -> None:
    definition = write_definition(tmp_path, many_secrets(2, files=1))
    envs = [server_env(data_dir=tmp_path / name, config=definition, database_url=pg_database) for name in ("a", "b")]
    pair = tuple(servers(env, tmp_path / f"{name}.log", workers=2) for env, name in zip(envs, "ab", strict=True))
    key = _apikey(envs[0], "create", "ci", "--scope", "read")
    assert _statuses(pair, key) == {200}

    _apikey(envs[0], "revoke", "ci")

    assert _statuses(pair, key) == {401}
