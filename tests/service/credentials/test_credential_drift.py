"""Drift and repair of source credentials: a password changed at the source behind the
service's back is reported, and a repair issues a new one; a target holding a stale one is
reported and written back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from tests.processes.live import postgres_admin_url
from tests.service.credentials.sources import Clock, connects, credential_secret, held, postgres_users, project, state

pytestmark = pytest.mark.postgres


def _change_behind_the_service(user: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(postgres_admin_url(), autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER ROLE {} PASSWORD 'set-by-hand-0000'").format(sql.Identifier(user)))


def _reasons(ws: object) -> list[tuple[str, object]]:
    return [(i.details["reason"], i.details.get("changed_at_source")) for i in detect_drift(ws).details]  # type: ignore[arg-type]


def test_drift_is_clean_while_the_targets_credential_logs_in(tmp_path: Path) -> None:
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b)), {"main": postgres_admin_url()}, Clock())
        sync(ws)
        assert detect_drift(ws).has_drift is False


def test_drift_reports_a_password_changed_at_the_source(tmp_path: Path) -> None:
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b)), {"main": postgres_admin_url()}, Clock())
        sync(ws)
        _change_behind_the_service(a)
        result = detect_drift(ws)
        assert result.has_drift and result.secrets_with_drift == ["db"]
        assert _reasons(ws) == [("credential_rejected", True)]


def test_repair_issues_a_new_credential_when_no_target_holds_one_that_logs_in(tmp_path: Path) -> None:
    admin = postgres_admin_url()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b)), {"main": admin}, Clock())
        sync(ws)
        _change_behind_the_service(a)
        result = sync(ws, repair=True)
        assert result.secrets_repaired == ["db"], result.errors
        assert connects(admin, held(ws))
        assert detect_drift(ws).has_drift is False


def test_repair_writes_the_current_credential_back_over_a_stale_one(tmp_path: Path) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users() as (a, b):
        secret = credential_secret("postgres_user", (a, b), grace="0s", targets=("app.json", "other.json"))
        ws = project(tmp_path, secret, {"main": admin}, clock)
        sync(ws)
        stale = held(ws)
        clock.advance(days=31)
        execute_rotation(ws)
        current = held(ws)
        execute_rotation(ws)  # grace over: the previous user is retired
        (tmp_path / "app.json").write_text(json.dumps({"db": stale}))
        assert ("credential_rejected", False) in _reasons(ws)
        assert sync(ws, repair=True).secrets_repaired == ["db"]
        assert held(ws) == current and connects(admin, current)
        assert held(ws, "other.json") == current  # written back, not rotated


def test_repair_reissues_the_current_user_in_place_while_the_previous_one_is_in_its_grace(tmp_path: Path) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b), grace="1h"), {"main": admin}, clock)
        sync(ws)
        first = held(ws)
        clock.advance(days=31)
        execute_rotation(ws)
        _change_behind_the_service(b)
        result = sync(ws, repair=True)
        assert result.secrets_repaired == ["db"], result.errors
        assert '"username":"' + b + '"' in held(ws) and connects(admin, held(ws))
        assert connects(admin, first)  # the previous user keeps its grace period
        assert state(ws)["current"] == b and state(ws)["previous"] == a


def test_a_source_that_cannot_be_reached_is_unverifiable_not_a_rejected_credential(tmp_path: Path) -> None:
    from dataclasses import replace

    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from secretsapi.service.definition.egress import egress_of
    from tests.processes.live import free_port

    admin = postgres_admin_url()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b)), {"main": admin}, Clock())
        sync(ws)
        before = held(ws)
        closed = make_conninfo("", **{**conninfo_to_dict(admin), "port": free_port(), "connect_timeout": 2})
        away = replace(ws, egress=egress_of({}, {}, connections={"main": "postgresql:///?" + closed.replace(" ", "&")}))
        result = detect_drift(away)
        assert result.has_drift
        assert [i.details["reason"] for i in result.details] == ["credential_unverifiable"]
        assert sync(away, repair=True).secrets_repaired == []  # nothing is rotated on a guess
        assert held(ws) == before
