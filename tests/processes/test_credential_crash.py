"""A worker killed (SIGKILL) in any phase of a source credential's rotation leaves a state the
next run finishes or undoes: every target keeps a credential that logs in meanwhile."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from tests.processes.live import ROOT, postgres_admin_url
from tests.service.credentials.conftest import mariadb_url
from tests.service.credentials.sources import (
    Clock,
    connects,
    credential_secret,
    held,
    mariadb_connects,
    mariadb_users,
    postgres_users,
    project,
    state,
)

pytestmark = pytest.mark.slow
__all__ = ["mariadb_url"]  # the session's MariaDB server, for the mysql_user case
TARGETS = ("app.json", "second.json")


def _killed_at(phase: str, ws_path: Path, connections: dict[str, str], clock: Clock) -> None:
    """Run a rotation in a worker process and SIGKILL it once it reaches ``phase``."""
    args = [sys.executable, "-m", "tests.processes.credential_worker", str(ws_path), json.dumps(connections),
            phase, clock.now.isoformat()]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line == f"at {phase}", proc.stderr.read() if proc.stderr else line
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.postgres
@pytest.mark.parametrize("phase", ["issue", "verify", "targets", "commit"])
def test_a_rotation_killed_in_a_phase_leaves_working_targets_and_the_next_run_completes_it(
    tmp_path: Path, phase: str
) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users() as (a, b):
        secret = credential_secret("postgres_user", (a, b), targets=TARGETS)
        ws = project(tmp_path, secret, {"main": admin}, clock)
        sync(ws)
        assert state(ws)["current"] == a
        clock.advance(days=31)
        _killed_at(phase, ws.definition_path, {"main": admin}, clock)
        assert state(ws)["current"] == a  # nothing committed
        assert all(connects(admin, held(ws, target)) for target in TARGETS)
        left = held(ws)
        result = execute_rotation(ws)
        assert result.rotated == ["db"], result.errors
        assert state(ws)["current"] == b and state(ws)["previous"] == a
        assert held(ws) == held(ws, "second.json") and connects(admin, held(ws))
        if phase == "commit":  # every target had the new credential: the next run finished that one
            assert held(ws) == left


@pytest.mark.postgres
def test_a_retirement_killed_before_it_is_done_is_done_by_the_next_run(tmp_path: Path) -> None:
    admin, clock = postgres_admin_url(), Clock()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b), grace="1h"), {"main": admin}, clock)
        sync(ws)
        first = held(ws)
        clock.advance(days=31)
        execute_rotation(ws)
        clock.advance(hours=2)
        _killed_at("retire", ws.definition_path, {"main": admin}, clock)
        assert state(ws)["previous"] == a and connects(admin, first)
        execute_rotation(ws)
        assert state(ws)["retired"] == a and not connects(admin, first)
        assert connects(admin, held(ws))


def test_a_mariadb_rotation_killed_before_its_commit_is_finished_by_the_next_run(
    tmp_path: Path, mariadb_url: str
) -> None:
    clock = Clock()
    with mariadb_users(mariadb_url) as (a, b):
        ws = project(tmp_path, credential_secret("mysql_user", (a, b), targets=TARGETS), {"main": mariadb_url}, clock)
        sync(ws)
        clock.advance(days=31)
        _killed_at("commit", ws.definition_path, {"main": mariadb_url}, clock)
        left = held(ws)
        assert state(ws)["current"] == a and mariadb_connects(mariadb_url, left)
        assert execute_rotation(ws).rotated == ["db"]
        assert held(ws) == held(ws, "second.json") == left and state(ws)["current"] == b
