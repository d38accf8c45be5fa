"""Nothing half-done: a credential that does not log in, or a target that cannot be written,
stops its rotation before the lockfile commit, and every target keeps a credential that works."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.processes.live import postgres_admin_url
from tests.service.credentials.sources import Clock, connects, credential_secret, held, postgres_users, project, state

pytestmark = pytest.mark.postgres


def entry(ws: Workspace) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(ws.lockfile_path.read_text())["secrets"]["db"]
    return found


def _expire(user: str) -> None:
    """The user's password stops working whatever it is (a password change keeps VALID UNTIL)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(postgres_admin_url(), autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER ROLE {} VALID UNTIL '2000-01-01'").format(sql.Identifier(user)))


def test_a_credential_that_fails_verification_writes_no_target_and_names_the_phase(tmp_path: Path) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b)), {"main": admin}, clock)
        sync(ws)
        before, entry_before = held(ws), entry(ws)
        _expire(b)
        clock.advance(days=31)
        result = execute_rotation(ws)
        assert result.failed == ["db"]
        assert "phase 'verify' failed" in result.errors[0].message
        assert held(ws) == before and connects(admin, before)
        assert entry(ws) == entry_before


def test_a_target_that_cannot_be_written_keeps_the_user_in_use_current(tmp_path: Path) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users() as (a, b):
        secret = credential_secret("postgres_user", (a, b), targets=("app.json", "sub/app.json"))
        ws = project(tmp_path, secret, {"main": admin}, clock)
        sync(ws)
        kept = held(ws, "sub/app.json")
        shutil.rmtree(tmp_path / "sub")
        (tmp_path / "sub").write_text("a file where the target's folder was\n")
        clock.advance(days=31)
        result = execute_rotation(ws)
        assert result.failed == ["db"]
        assert state(ws)["current"] == a  # not marked current: a target lacks it
        written = held(ws)
        assert connects(admin, written) and connects(admin, kept)
        (tmp_path / "sub").unlink()
        clock.advance(minutes=1)
        retried = execute_rotation(ws)  # the retry adopts what the first run wrote and writes both
        assert retried.rotated == ["db"], retried.errors
        assert held(ws) == held(ws, "sub/app.json") == written and connects(admin, written)
        assert state(ws)["current"] == b
