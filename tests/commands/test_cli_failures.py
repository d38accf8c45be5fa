"""The engine commands never show a traceback: a fresh database is migrated first, and every
failure is one line, or ``{"error", "detail"}`` on stdout under --json, with exit code 1."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import OperationalError

from secretsapi.actions import checks
from secretsapi.management.base import EXIT_ERROR, EXIT_FINDING, Failure, as_failure
from secretsapi.service.errors import LockTimeout
from tests.factories import Project, definition, file_secret

ROOT = Path(__file__).resolve().parents[2]

# Each engine command on its own fresh database, and the exit code it owes the example below.
FRESH = {
    "sync": 0,
    "rotate": 0,
    "drift": EXIT_FINDING,  # nothing generated yet
    "policy": 0,
    "validate": 0,
    "status": EXIT_FINDING,  # nothing generated yet
}


def command_env(data: Path, **given: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    return {**env, "SERVICE_DATA_DIR": str(data), **given}


def manage(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(ROOT / "manage.py"), *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def small_project(folder: Path) -> Path:
    folder.mkdir(parents=True)
    Project(folder).write(definition(file_secret("db", "out/app.env", rotation_period="30d")))
    return folder / "Secretfile.yml"


@pytest.fixture(scope="module")
def fresh_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, str, Path]]:
    """Every engine command with --json, each on an empty data folder, all at once (they are slow to start)."""
    base = tmp_path_factory.mktemp("fresh")
    started = {}
    for name in FRESH:
        folder = base / name
        config = small_project(folder / "project")
        env = command_env(folder / "data", SERVICE_CONFIG=str(config))
        started[name] = (manage(name, "--json", cwd=folder, env=env), folder / "data")
    return {name: (proc.wait(timeout=120), *proc.communicate(), data) for name, (proc, data) in started.items()}


@pytest.mark.slow
def test_a_command_on_a_fresh_database_migrates_it_first(tmp_path: Path) -> None:
    config = small_project(tmp_path / "project")
    proc = manage("sync", cwd=tmp_path, env=command_env(tmp_path / "data", SERVICE_CONFIG=str(config)))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "generated  db" in out, err
    assert err == ""  # quietly: no migration output


@pytest.mark.slow  # six fresh databases: slow to migrate on a busy machine
@pytest.mark.parametrize("name", FRESH)
def test_every_engine_command_migrates_a_fresh_database_and_answers(
        name: str, fresh_runs: dict[str, tuple[int, str, str, Path]]) -> None:
    code, out, err, data = fresh_runs[name]
    assert "Traceback" not in err and code == FRESH[name], err
    json.loads(out)
    with sqlite3.connect(data / "service.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM audit_auditentry").fetchone()[0] >= 1


def test_a_migrated_database_is_not_migrated_again(project: Project, db: None,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def migrate_again(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("migrate called on a migrated database")

    monkeypatch.setattr("secretsapi.management.base.call_command", migrate_again)
    project.write(definition(file_secret("db")))
    call_command("validate", stdout=StringIO())


@pytest.mark.slow
def test_bad_arguments_are_one_line_and_exit_1(tmp_path: Path) -> None:
    proc = manage("sync", "--no-such-flag", cwd=tmp_path, env=command_env(tmp_path / "data"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_ERROR and out == ""
    assert err.strip() == "Error: unrecognized arguments: --no-such-flag"


@pytest.mark.slow
def test_bad_arguments_under_json_are_a_json_error(tmp_path: Path) -> None:
    proc = manage("rotate", "--json", "--secret", cwd=tmp_path, env=command_env(tmp_path / "data"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_ERROR and "Traceback" not in err
    assert json.loads(out) == {"error": "usage", "detail": "argument --secret: expected one argument"}


@pytest.mark.slow
def test_an_unreachable_database_is_a_json_error_without_traceback(tmp_path: Path) -> None:
    config = small_project(tmp_path / "project")
    env = command_env(tmp_path / "data", SERVICE_CONFIG=str(config), DATABASE_URL="postgres://nobody@127.0.0.1:1/none")
    proc = manage("status", "--json", cwd=tmp_path, env=env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_ERROR and "Traceback" not in err
    body = json.loads(out)
    assert body["error"] == "database_error" and body["detail"].startswith("database error: ")


# -- in-process: the same execute() as on the command line --------------------------------------


def run_json(*args: str) -> tuple[int, Any]:
    out = StringIO()
    try:
        call_command(*args, "--json", stdout=out)
    except Failure as exc:
        return exc.returncode, json.loads(out.getvalue())
    return 0, json.loads(out.getvalue())


@pytest.mark.django_db
@pytest.mark.parametrize("name", FRESH)
def test_a_missing_definition_is_a_json_error_for_every_command(name: str, project: Project) -> None:
    code, body = run_json(name)
    assert code == EXIT_ERROR and set(body) == {"error", "detail"}
    assert body["error"] == "definition_not_found" and "Secretfile.yml" in body["detail"]


@pytest.mark.django_db
def test_an_invalid_definition_is_a_json_error(project: Project) -> None:
    project.write({"version": "1.0", "secrets": [{"name": "x", "kind": "random_hex", "rotation_period": "9q"}]})
    code, body = run_json("sync")
    assert (code, body["error"]) == (EXIT_ERROR, "definition_invalid") and "rotation_period" in body["detail"]


@pytest.mark.django_db
def test_an_unreadable_lockfile_is_a_json_error(project: Project) -> None:
    project.write(definition(file_secret("db")))
    project.lockfile.write_text("{not json")
    code, body = run_json("drift")
    assert (code, body["error"]) == (EXIT_ERROR, "lockfile_unreadable")


@pytest.mark.django_db
def test_a_finding_under_json_prints_the_result_alone_and_exits_2(project: Project) -> None:
    project.write(definition(file_secret("db")))
    code, body = run_json("status", "db")
    assert code == EXIT_FINDING and body["exists"] is False and "error" not in body


@pytest.mark.django_db
def test_an_unexpected_exception_is_one_generic_line_with_its_traceback_at_debug(
        project: Project, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("internal detail")

    monkeypatch.setattr(checks, "check_policy", broken)
    project.write(definition(file_secret("db")))
    with caplog.at_level(logging.DEBUG, logger="secretsapi.management"):
        code, body = run_json("policy")
    assert (code, body["error"]) == (EXIT_ERROR, "internal_error")
    assert "internal detail" not in body["detail"] and "RuntimeError" in body["detail"]
    (record,) = [r for r in caplog.records if r.name == "secretsapi.management"]
    assert record.levelno == logging.DEBUG and record.exc_info is not None


def test_a_lock_timeout_is_an_error_naming_the_lock() -> None:
    failure = as_failure(LockTimeout("timed out after 60 s waiting for the lockfile lock"))
    assert (failure.error, failure.returncode) == ("lock_timeout", EXIT_ERROR)
    assert failure.detail == "timed out after 60 s waiting for the lockfile lock"


def test_a_database_error_is_one_line() -> None:
    failure = as_failure(OperationalError("no such table:\n  audit_auditentry"))
    assert (failure.error, failure.detail) == ("database_error", "database error: no such table: audit_auditentry")


@pytest.mark.django_db
def test_a_database_error_while_migrating_is_a_json_error_on_the_given_stdout(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    def unreachable(alias: str = "default") -> bool:
        raise OperationalError("connection refused")

    monkeypatch.setattr("secretsapi.management.base.pending_migrations", unreachable)
    code, body = run_json("validate")
    assert (code, body) == (EXIT_ERROR, {"error": "database_error", "detail": "database error: connection refused"})
