"""A rotation never moves a secret: recorded targets that this rendering of the definition would
not write fail the secret, in execute's result and in the check's status."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from secretsapi.service.rotation import check_rotation, execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import definition

SYNCED_AT = datetime(2026, 1, 1, tzinfo=UTC)
LATER = SYNCED_AT + timedelta(days=40)  # past the 30-day period


def env_file_secret(name: str = "db", **fields: Any) -> dict[str, Any]:
    target = {"provider": "local", "kind": "file", "config": {"path": "out/{{ var.env }}.env"}}
    return {"name": name, "kind": "random_hex", "rotation_period": "30d", "targets": [target], **fields}


def project(tmp_path: Path, *secrets: dict[str, Any]) -> Workspace:
    """``env`` is dev unless ``prod.szvar`` is given; synced (dev) at SYNCED_AT."""
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump(definition(*(secrets or (env_file_secret(),)), variables={"env": "dev"})))
    (tmp_path / "prod.szvar").write_text("env: prod\n")
    ws = Workspace(definition_path=path, environ={}, clock=lambda: SYNCED_AT)
    assert sync(ws).secrets_failed == []
    return replace(ws, clock=lambda: LATER)


def prod(ws: Workspace) -> Workspace:
    return replace(ws, var_files=("prod.szvar",))


def test_a_rotation_with_other_var_files_fails_the_secret_and_writes_nothing(tmp_path: Path) -> None:
    ws = project(tmp_path)
    lock_before = ws.lockfile_path.read_bytes()
    result = execute_rotation(prod(ws))
    assert (result.rotated, result.failed) == ([], ["db"])
    assert not (tmp_path / "out/prod.env").exists()
    assert ws.lockfile_path.read_bytes() == lock_before


def test_the_failure_names_both_sets_and_says_how_to_proceed(tmp_path: Path) -> None:
    ws = project(tmp_path)
    (error,) = execute_rotation(prod(ws)).errors
    assert (error.secret, error.target) == ("db", None)
    assert "[local/file/out/dev.env]" in error.message
    assert "var files [prod.szvar] has [local/file/out/prod.env]" in error.message
    assert "pass the var files it was synced with (or move it with a forced sync)" in error.message


def test_a_forced_rotation_does_not_move_it_either(tmp_path: Path) -> None:
    ws = project(tmp_path)
    assert execute_rotation(prod(ws), force=True).failed == ["db"]
    assert not (tmp_path / "out/prod.env").exists()


def test_the_var_files_it_was_synced_with_rotate_it(tmp_path: Path) -> None:
    ws = project(tmp_path)
    assert execute_rotation(ws).rotated == ["db"]


def test_a_forced_sync_moves_it_and_it_then_rotates_there(tmp_path: Path) -> None:
    ws = prod(project(tmp_path))
    assert sync(ws, force=True).secrets_generated == ["db"]
    assert execute_rotation(ws, force=True).rotated == ["db"]
    targets = json.loads(ws.lockfile_path.read_text())["secrets"]["db"]["targets"]
    assert list(targets) == ["local/file/out/prod.env"]


def test_a_secret_that_is_not_due_is_not_failed_by_an_unforced_rotation(tmp_path: Path) -> None:
    ws = replace(prod(project(tmp_path)), clock=lambda: SYNCED_AT)
    result = execute_rotation(ws)
    assert (result.rotated, result.failed, result.errors) == ([], [], [])


def test_a_target_dropped_from_the_definition_fails_the_rotation_too(tmp_path: Path) -> None:
    ws = project(tmp_path)
    doc = yaml.safe_load(ws.definition_path.read_text())
    doc["secrets"][0]["targets"][0]["config"]["path"] = "out/renamed.env"
    ws.definition_path.write_text(yaml.safe_dump(doc))
    (error,) = execute_rotation(ws).errors
    assert "rendered with no var files has [local/file/out/renamed.env]" in error.message


def test_only_the_secret_that_would_move_fails(tmp_path: Path) -> None:
    fixed = {"name": "api", "kind": "random_hex", "rotation_period": "30d",
             "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/shared.env"}}]}
    ws = prod(project(tmp_path, env_file_secret(), fixed))
    result = execute_rotation(ws)
    assert (result.rotated, result.failed) == (["api"], ["db"])


def test_secretzero_s_pathless_file_id_does_not_count_as_a_move(tmp_path: Path) -> None:
    ws = project(tmp_path)
    data = json.loads(ws.lockfile_path.read_text())
    data["secrets"]["db"]["targets"]["local/file/"] = data["secrets"]["db"]["targets"]["local/file/out/dev.env"]
    ws.lockfile_path.write_text(json.dumps(data))
    assert execute_rotation(ws).rotated == ["db"]


def test_a_recorded_target_of_a_kind_this_service_cannot_write_is_not_a_move(tmp_path: Path) -> None:
    # SecretZero records it as <provider>/<kind>/<name>; the rotation fails only that target.
    keeper = {"provider": "keeper", "kind": "keeper_record", "config": {"name": "DB"}}
    secret = env_file_secret()
    secret["targets"].append(keeper)
    ws = project(tmp_path, secret)
    data = json.loads(ws.lockfile_path.read_text())
    data["secrets"]["db"]["targets"]["keeper/keeper_record/DB"] = data["secrets"]["db"]["hash"]
    ws.lockfile_path.write_text(json.dumps(data))
    result = execute_rotation(ws)
    assert result.rotated == ["db"]
    assert [e.target for e in result.errors] == ["keeper/keeper_record"]


def test_a_template_secret_fails_when_its_fields_would_move(tmp_path: Path) -> None:
    path = tmp_path / "Secretfile.yml"
    template = {"fields": {"user": {"generator": {"kind": "random_string"}},
                           "password": {"generator": {"kind": "random_password"}}},
                "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/{{ var.env }}.json"}}]}
    path.write_text(yaml.safe_dump(definition({"name": "db", "kind": "templates.creds", "rotation_period": "30d"},
                                              variables={"env": "dev"}, templates={"creds": template})))
    (tmp_path / "prod.szvar").write_text("env: prod\n")
    ws = Workspace(definition_path=path, environ={}, clock=lambda: SYNCED_AT)
    assert sync(ws).secrets_generated == ["db"]
    result = execute_rotation(prod(replace(ws, clock=lambda: LATER)))
    assert result.failed == ["db"]
    assert "[local/file/out/dev.json]" in result.errors[0].message
    assert execute_rotation(replace(ws, clock=lambda: LATER)).rotated == ["db"]


def test_the_check_keeps_the_due_state_and_says_it_cannot_rotate(tmp_path: Path) -> None:
    ws = project(tmp_path)
    (status,) = check_rotation(prod(ws)).results
    assert status.should_rotate is True
    assert status.status.startswith("overdue by 10 days; rotating would move it: ")
    assert "pass the var files it was synced with" in status.status
    assert check_rotation(prod(ws)).secrets_overdue == ["db"]


def test_the_check_with_the_synced_var_files_is_plain(tmp_path: Path) -> None:
    (status,) = check_rotation(project(tmp_path)).results
    assert status.status == "overdue by 10 days"
