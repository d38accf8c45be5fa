"""PostgreSQL users that take turns: a rotation changes the user not in use, verifies it, writes
every target, commits, and only then makes it current; the previous one is retired after its grace."""

from __future__ import annotations

from pathlib import Path

import pytest

from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from tests.processes.live import postgres_admin_url
from tests.service.credentials.sources import Clock, connects, credential_secret, held, postgres_users, project, state

pytestmark = pytest.mark.postgres


def test_the_first_sync_sets_the_first_users_password_and_writes_it_with_the_user_name(tmp_path: Path) -> None:
    admin = postgres_admin_url()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b)), {"main": admin}, Clock())
        assert sync(ws).secrets_failed == []
        assert '"username":"' + a + '"' in held(ws)
        assert connects(admin, held(ws))
        assert state(ws)["current"] == a


def test_a_rotation_switches_to_the_other_user_and_the_previous_one_still_logs_in(tmp_path: Path) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b)), {"main": admin}, clock)
        sync(ws)
        before = held(ws)
        clock.advance(days=31)
        result = execute_rotation(ws)
        assert result.rotated == ["db"], result.errors
        assert state(ws)["current"] == b and state(ws)["previous"] == a
        assert connects(admin, held(ws)) and connects(admin, before)


def test_the_previous_user_is_retired_by_a_rotation_run_after_its_grace_period(tmp_path: Path) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b), grace="2h"), {"main": admin}, clock)
        sync(ws)
        before = held(ws)
        clock.advance(days=31)
        execute_rotation(ws)
        clock.advance(hours=1)
        execute_rotation(ws)  # nothing due, grace not over: the previous user stays
        assert connects(admin, before)
        clock.advance(hours=2)
        execute_rotation(ws)
        assert not connects(admin, before)
        assert connects(admin, held(ws))
        assert state(ws)["retired"] == a and "previous" not in state(ws)


def test_a_due_rotation_waits_while_the_user_to_change_is_in_its_grace_period(tmp_path: Path) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b), grace="60d"), {"main": admin}, clock)
        sync(ws)
        first = held(ws)
        clock.advance(days=31)
        execute_rotation(ws)
        before = held(ws)
        clock.advance(days=31)  # due again; a's grace runs 29 more days
        result = execute_rotation(ws)
        assert result.failed == ["db"]
        assert "phase 'choose'" in result.errors[0].message and "grace period" in result.errors[0].message
        assert held(ws) == before and connects(admin, before) and connects(admin, first)


def test_a_forced_rotation_cuts_the_grace_period_of_the_user_it_changes(tmp_path: Path) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b), grace="2h"), {"main": admin}, clock)
        sync(ws)
        first = held(ws)
        clock.advance(days=31)
        execute_rotation(ws)
        second = held(ws)
        assert execute_rotation(ws, force=True).rotated == ["db"]
        assert not connects(admin, first)  # a's grace was cut: it has a new password
        assert connects(admin, held(ws)) and connects(admin, second)
        assert state(ws)["current"] == a and state(ws)["previous"] == b


def test_single_phase_changes_the_one_users_password(tmp_path: Path) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users(1) as (a,):
        ws = project(tmp_path, credential_secret("postgres_user", (a,)), {"main": admin}, clock)
        sync(ws)
        before = held(ws)
        clock.advance(days=31)
        assert execute_rotation(ws).rotated == ["db"]
        assert connects(admin, held(ws)) and not connects(admin, before)
        assert state(ws)["current"] == a and "previous" not in state(ws)


def test_a_connection_the_operator_did_not_configure_fails_the_secret_naming_the_setting(tmp_path: Path) -> None:
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b)), {}, Clock())
        result = sync(ws)
        assert result.secrets_failed == ["db"]
        assert "SERVICE_ROTATION_CONNECTIONS" in result.errors[0].message
        assert not (tmp_path / "app.json").exists()


def test_a_sync_also_retires_a_previous_user_whose_grace_is_over(tmp_path: Path) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b), grace="1h"), {"main": admin}, clock)
        sync(ws)
        before = held(ws)
        clock.advance(days=31)
        execute_rotation(ws)
        clock.advance(hours=2)
        assert sync(ws).errors == []
        assert not connects(admin, before) and state(ws)["retired"] == a


def test_a_connection_url_with_a_driver_suffix_works(tmp_path: Path) -> None:
    admin = postgres_admin_url()
    with postgres_users() as (a, b):
        url = "postgresql+psycopg://" + admin.split("://", 1)[1]
        ws = project(tmp_path, credential_secret("postgres_user", (a, b)), {"main": url}, Clock())
        assert sync(ws).secrets_failed == []
        assert connects(admin, held(ws))
