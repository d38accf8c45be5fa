"""PostgreSQL going away under a real server (issue 25, point 7), as the attacker saw it: with
the database gone, ``/health`` said healthy and every other call was a 500. Now ``/health`` is
503 ``unhealthy`` naming the reason, the other calls are 503 ``database_unavailable``, and all
answer again once the database is back.

The database is taken away from this test's server only (the PostgreSQL server is shared):
its database refuses new connections and its sessions are ended, which is what a stopped
server looks like to the service.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from audit.recorder import COMPLETED_LATE
from tests.processes.live import (
    API_KEY,
    LiveServer,
    http,
    many_secrets,
    pg_rows,
    postgres_admin_url,
    server_env,
    write_definition,
)

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def database_away(database_url: str) -> Iterator[None]:
    name = database_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_admin_url(), autocommit=True, connect_timeout=10) as conn:
        conn.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
        try:
            yield
        finally:
            conn.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')


SECRETS = 5000  # a sync long enough to take the database away while it runs


@pytest.fixture
def server(tmp_path: Path, pg_migrated: str, servers: Callable[..., LiveServer]) -> LiveServer:
    config = write_definition(tmp_path, many_secrets(SECRETS, files=4))
    return servers(server_env(data_dir=tmp_path / "data", config=config, database_url=pg_migrated),
                   tmp_path / "serve.log")


def test_health_and_other_calls_are_503_while_the_database_is_away(server: LiveServer, pg_migrated: str) -> None:
    with database_away(pg_migrated):
        status, _, body = http("GET", server.url + "/health")
        assert (status, body["status"], body["reason"]) == (503, "unhealthy", "database unreachable")
        status, _, body = http("GET", server.url + "/secrets", headers={"X-API-Key": API_KEY})
        assert status == 503
        assert (set(body), body["error"]) == ({"error", "detail", "timestamp"}, "Database unavailable")
    status, _, body = http("GET", server.url + "/health")
    assert (status, body["status"]) == (200, "healthy")
    assert "Traceback" not in server.log()


JOB_SAW_IT = "Database unavailable during a job"


def sync_rows(database_url: str) -> list[tuple[Any, ...]]:
    return pg_rows(database_url, "SELECT details, success FROM audit_auditentry WHERE action = 'sync'")


def test_a_sync_whose_database_goes_away_midway_does_not_stay_started(server: LiveServer, pg_migrated: str) -> None:
    answers: list[tuple[int, Any]] = []
    sync = threading.Thread(target=lambda: answers.append(http(
        "POST", server.url + "/sync", {}, headers={"X-API-Key": API_KEY}, timeout=120)[::2]))
    sync.start()
    try:
        deadline = time.monotonic() + 60
        while not sync_rows(pg_migrated):  # the row is begun before anything is written
            assert time.monotonic() < deadline, "the sync never began its audit row"
            time.sleep(0.02)
        with database_away(pg_migrated):
            sync.join(120)
            # The request's wait fails on its own connection and may answer before the job has
            # tried to write its outcome: keep the database away until the job has tried (it logs
            # this after keeping the outcome it could not write).
            deadline = time.monotonic() + 60
            while JOB_SAW_IT not in server.log():
                assert time.monotonic() < deadline, f"the job never met the database away:\n{server.log()[-4000:]}"
                time.sleep(0.05)
    finally:
        sync.join(120)
    (status, body), = answers
    assert status == 503, body
    assert set(body) == {"error", "detail", "timestamp"}
    assert http("GET", server.url + "/health")[0] == 200
    # The sync ran in the job worker, which writes the outcome it kept once the database answers.
    deadline = time.monotonic() + 60
    while "state" in (details := sync_rows(pg_migrated)[0][0]) and time.monotonic() < deadline:
        time.sleep(0.2)
    (details, success), = sync_rows(pg_migrated)
    assert "state" not in details, details
    assert success is False and details["error"]  # the sync lost its lock session with the database
    assert details["completed_late"] == COMPLETED_LATE
