"""Several instances starting at once against one empty database: exactly one migrates."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.processes.live import LiveServer, pg_rows, server_env, sqlite_rows

pytestmark = pytest.mark.slow

INSTANCES = 3


def _start_together(tmp_path: Path, servers: Callable[..., LiveServer], database_url: str | None) -> None:
    (tmp_path / "Secretfile.yml").write_text("version: '1.0'\nsecrets: []\n")
    env = server_env(data_dir=tmp_path / "data", config=tmp_path / "Secretfile.yml", database_url=database_url)
    with ThreadPoolExecutor(INSTANCES) as pool:
        started = list(pool.map(lambda i: servers(env, tmp_path / f"serve{i}.log", migrated=False), range(INSTANCES)))
    for server in started:
        status, body = server.call("GET", "/audit/logs?limit=1")
        assert status == 200, (body, server.log())


def test_instances_starting_at_once_on_sqlite_all_come_up(tmp_path: Path, servers: Callable[..., LiveServer]) -> None:
    _start_together(tmp_path, servers, None)
    rows = sqlite_rows(tmp_path / "data" / "service.sqlite3", "SELECT app, name FROM django_migrations")
    assert len(rows) == len(set(rows)) and ("audit", "0001_initial") in rows


@pytest.mark.postgres
def test_instances_starting_at_once_on_postgresql_all_come_up(
    tmp_path: Path, pg_database: str, servers: Callable[..., LiveServer]
) -> None:
    _start_together(tmp_path, servers, pg_database)
    rows = pg_rows(pg_database, "SELECT app, name FROM django_migrations")
    assert len(rows) == len(set(rows)) and ("audit", "0001_initial") in rows
