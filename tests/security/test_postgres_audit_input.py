"""Client input that ends up in audit rows, against a real server on PostgreSQL, which enforces
what SQLite does not: varchar lengths, and JSON text without NUL or lone surrogates.

The fuzzer found both on PostgreSQL; the recorder now clips long names and replaces
characters PostgreSQL cannot store.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.processes.live import LiveServer, many_secrets, server_env, write_definition

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@pytest.fixture
def pg_server(tmp_path: Path, pg_migrated: str, servers: Callable[..., LiveServer]) -> LiveServer:
    definition = write_definition(tmp_path, many_secrets(2, files=1))
    return servers(server_env(data_dir=tmp_path / "data", config=definition, database_url=pg_migrated),
                   tmp_path / "serve.log")


def test_the_longest_secret_name_a_request_may_carry_is_404_not_500(pg_server: LiveServer) -> None:
    status, body = pg_server.call("POST", "/sync", {"secret_name": "n" * 255})  # the longest name accepted
    assert status == 404, body


def test_a_variable_name_postgresql_cannot_store_in_json_is_not_a_500(pg_server: LiveServer) -> None:
    status, body = pg_server.call("POST", "/config/render", {"variables": {"a\u0000b": "x"}})
    assert status < 500, body
