"""Issue 18.7: requests without a valid key cost bounded space, and every one is still counted.

The attack: 3,000 wrong-key requests with 4 KB paths added 16.6 MB to the database (a row per
attempt holding the path). Failures are now tallies: one row per client, reason and minute.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from django.db import connection
from rest_framework.test import APIClient

from audit.failures import PATH_MAX
from audit.models import AuditEntry
from tests.processes.live import (
    LiveServer,
    http,
    pg_rows,
    server_env,
    sqlite_rows,
    write_definition,
)

# Left to make test (tests/tiers.py): floods of thousands of requests.
pytestmark = pytest.mark.thorough

LONG_NAME = "a" * 4096
ATTEMPTS = 3000
TALLY_SUM = "SELECT count(*), sum(CAST(json_extract(details, '$.count') AS INTEGER)) FROM audit_auditentry"
PG_TALLY_SUM = "SELECT count(*), sum((details ->> 'count')::int) FROM audit_auditentry"


def stored_bytes() -> int:
    """What the audit rows hold, column by column (the test database is in memory: no file size)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(sum(length(details) + length(resource) + length(action)"
                       " + coalesce(length(user), 0) + coalesce(length(tally_key), 0)), 0)"
                       " FROM audit_auditentry")
        return int(cursor.fetchone()[0])


def counted(action: str = "authenticate") -> int:
    return sum(row.details["count"] for row in AuditEntry.objects.filter(action=action))


def test_three_thousand_wrong_key_requests_with_4_kb_paths_cost_a_few_rows(api: APIClient) -> None:
    for _ in range(ATTEMPTS):
        assert api.get(f"/secrets/{LONG_NAME}", HTTP_X_API_KEY="wrong").status_code == 401
    # One row per minute the flood lasted (the test client runs it in seconds; allow a slow machine).
    assert AuditEntry.objects.count() <= 5
    assert stored_bytes() < 5 * 1024


def test_every_wrong_key_request_is_counted(api: APIClient) -> None:
    for _ in range(ATTEMPTS):
        api.get(f"/secrets/{LONG_NAME}", HTTP_X_API_KEY="wrong")
    assert counted() == ATTEMPTS


def test_missing_and_wrong_keys_are_counted_apart(api: APIClient) -> None:
    for _ in range(3):
        api.get("/secrets")
        api.get("/secrets", HTTP_X_API_KEY="wrong")
    assert sorted((row.details["reason"], row.details["count"]) for row in AuditEntry.objects.all()) == [
        ("invalid", 3), ("missing", 3)]


def test_the_stored_path_is_cut_to_256_characters(api: APIClient) -> None:
    api.get(f"/secrets/{LONG_NAME}", HTTP_X_API_KEY="wrong")
    path = AuditEntry.objects.get(action="authenticate").details["path"]
    assert len(path) <= PATH_MAX == 256
    assert path.startswith("/secrets/aaaa")


def test_no_request_header_is_stored(api: APIClient) -> None:
    api.get("/secrets", HTTP_X_API_KEY="wrong-key-marker", HTTP_USER_AGENT="agent-marker",
            HTTP_X_FORWARDED_FOR="198.51.100.7", HTTP_COOKIE="sessionid=cookie-marker")
    row = AuditEntry.objects.get(action="authenticate")
    stored = str((row.resource, row.user, row.details, row.tally_key))
    for marker in ("wrong-key-marker", "agent-marker", "198.51.100.7", "cookie-marker"):
        assert marker not in stored
    # The client is the address that connected, never one a header claims.
    assert row.details["client"] == "127.0.0.1"


def test_each_client_gets_its_own_tally(api: APIClient) -> None:
    api.get("/secrets", HTTP_X_API_KEY="wrong", REMOTE_ADDR="192.0.2.1")
    api.get("/secrets", HTTP_X_API_KEY="wrong", REMOTE_ADDR="192.0.2.2")
    api.get("/secrets", HTTP_X_API_KEY="wrong", REMOTE_ADDR="192.0.2.2")
    assert sorted(AuditEntry.objects.values_list("details__client", "details__count")) == [
        ("192.0.2.1", 1), ("192.0.2.2", 2)]


def test_addresses_of_one_ipv6_64_share_a_tally(api: APIClient) -> None:
    for host in range(1, 6):
        api.get("/secrets", HTTP_X_API_KEY="wrong", REMOTE_ADDR=f"2001:db8:1:2::{host:x}")
    (row,) = AuditEntry.objects.all()
    assert (row.details["client"], row.details["count"]) == ("2001:db8:1:2::/64", 5)


def test_the_audit_log_shows_the_count(api: APIClient, authed_api: APIClient) -> None:
    for _ in range(4):
        api.get("/secrets", HTTP_X_API_KEY="wrong")
    (entry,) = authed_api.get("/audit/logs?action=authenticate").json()["entries"]
    assert (entry["success"], entry["resource"], entry["details"]["count"]) == (False, "auth", 4)
    assert "tally_key" not in entry


# --- several workers, one count ----------------------------------------------------------------

WORKERS, THREADS, PER_THREAD = 2, 6, 60


def flood(server: LiveServer) -> int:
    """Wrong-key requests from several threads at once (each its own connection); returns how many."""
    statuses: list[int] = []

    def run() -> None:
        for _ in range(PER_THREAD):
            status, _, _ = http("GET", f"{server.url}/secrets/{'b' * 2048}", headers={"X-API-Key": "wrong"})
            statuses.append(status)

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert statuses == [401] * THREADS * PER_THREAD
    return len(statuses)


@pytest.mark.slow
def test_failures_across_workers_on_sqlite_add_up(servers: Callable[..., LiveServer], tmp_path: Path) -> None:
    config = write_definition(tmp_path, {"version": "1.0", "secrets": []})
    server = servers(server_env(data_dir=tmp_path / "data", config=config), tmp_path / "serve.log",
                     workers=WORKERS)
    sent = flood(server)
    rows, total = sqlite_rows(tmp_path / "data" / "service.sqlite3", TALLY_SUM)[0]
    assert (total, rows <= 3) == (sent, True)


@pytest.mark.slow
@pytest.mark.postgres
def test_failures_across_workers_on_postgresql_add_up(servers: Callable[..., LiveServer], tmp_path: Path,
                                                      pg_migrated: str) -> None:
    config = write_definition(tmp_path, {"version": "1.0", "secrets": []})
    server = servers(server_env(data_dir=tmp_path / "data", config=config, database_url=pg_migrated),
                     tmp_path / "serve.log", workers=WORKERS)
    sent = flood(server)
    rows, total = pg_rows(pg_migrated, PG_TALLY_SUM)[0]
    assert (total, rows <= 3) == (sent, True)
