"""MariaDB accounts that take turns (mysql_user), on a real MariaDB server."""

from __future__ import annotations

from pathlib import Path

import pytest

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from tests.service.credentials.sources import (
    Clock,
    credential_secret,
    held,
    mariadb_connects,
    mariadb_users,
    mysql_admin,
    project,
    state,
)

pytestmark = pytest.mark.slow  # starts a MariaDB server (tests/processes/mariadb.py)


def test_a_rotation_switches_accounts_and_keeps_the_previous_one_until_its_grace_is_over(
    tmp_path: Path, mariadb_url: str
) -> None:
    clock = Clock()
    with mariadb_users(mariadb_url) as (a, b):
        ws = project(tmp_path, credential_secret("mysql_user", (a, b), grace="1h"), {"main": mariadb_url}, clock)
        assert sync(ws).secrets_failed == []
        first = held(ws)
        assert mariadb_connects(mariadb_url, first) and state(ws)["current"] == a
        clock.advance(days=31)
        assert execute_rotation(ws).rotated == ["db"]
        assert state(ws)["current"] == b
        assert mariadb_connects(mariadb_url, held(ws)) and mariadb_connects(mariadb_url, first)
        clock.advance(hours=2)
        execute_rotation(ws)
        assert not mariadb_connects(mariadb_url, first) and mariadb_connects(mariadb_url, held(ws))


def test_a_password_changed_by_hand_is_drift_and_repair_issues_a_new_one(tmp_path: Path, mariadb_url: str) -> None:
    with mariadb_users(mariadb_url) as (a, b):
        ws = project(tmp_path, credential_secret("mysql_user", (a, b)), {"main": mariadb_url}, Clock())
        sync(ws)
        with mysql_admin(mariadb_url) as cursor:
            cursor.execute("ALTER USER %s@'%%' IDENTIFIED BY 'set-by-hand-0000'", (a,))
        assert [i.details["reason"] for i in detect_drift(ws).details] == ["credential_rejected"]
        assert sync(ws, repair=True).secrets_repaired == ["db"]
        assert mariadb_connects(mariadb_url, held(ws))
