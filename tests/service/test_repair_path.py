"""One repair path: every error names the operation that will fix it, and the status says when a
value last changed and how."""

from __future__ import annotations

import json
from pathlib import Path

from secretsapi.service.drift import detect_drift
from secretsapi.service.results import OperationError
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.state.repair import CHANGED, NO_COPY, NO_COPY_HELD
from secretsapi.service.status import secret_status
from secretsapi.service.sync import import_values, sync
from secretsapi.service.workspace import Workspace
from tests.factories import app_project, app_values, definition, file_secret, write_definition

ENV = "local/file/out/app.env"


def _workspace(folder: Path) -> Workspace:
    ws = Workspace(definition_path=write_definition(folder, app_project(folder)), lock_timeout=10, environ={})
    assert sync(ws).errors == []
    return ws


def _edit(folder: Path, name: str, value: str) -> None:
    """A hand edit of one line of ``out/app.env``."""
    env_file = folder / "out/app.env"
    env_file.write_text(env_file.read_text().replace(app_values(folder)[0][name], value))


def test_a_plain_sync_of_a_hand_edited_value_with_no_other_copy_names_import_or_force(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _edit(tmp_path, "session_key", "b" * 32)
    assert sync(ws).errors == [OperationError("session_key", ENV, NO_COPY_HELD)]
    assert "import" in NO_COPY_HELD and "sync with force" in NO_COPY_HELD and "repair" not in NO_COPY_HELD


def test_a_repair_of_a_hand_edited_value_with_no_other_copy_says_the_same(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _edit(tmp_path, "session_key", "b" * 32)
    result = sync(ws, repair=True)
    assert (result.errors, result.secrets_repaired) == ([OperationError("session_key", ENV, NO_COPY_HELD)], [])
    assert app_values(tmp_path)[0]["session_key"] == "b" * 32


def test_the_import_the_error_names_fixes_it(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _edit(tmp_path, "session_key", "b" * 32)
    import_values(ws, secret_names=["session_key"])
    assert sync(ws).errors == [] and detect_drift(ws).has_drift is False


def test_the_forced_sync_the_error_names_fixes_it(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _edit(tmp_path, "session_key", "b" * 32)
    sync(ws, force=True, secret_name="session_key")
    assert sync(ws).errors == [] and detect_drift(ws).has_drift is False


def test_a_plain_sync_names_repair_only_where_a_copy_is_left_for_it(tmp_path: Path) -> None:
    copies = {**file_secret("db", kind="random_hex"), "targets": [
        {"provider": "local", "kind": "file", "config": {"path": "out/app.env"}},
        {"provider": "local", "kind": "file", "config": {"path": "out/copy.json"}}]}
    ws = Workspace(definition_path=write_definition(tmp_path, definition(copies)), lock_timeout=10, environ={})
    sync(ws)
    (tmp_path / "out/app.env").write_text("db=edited\n")
    assert sync(ws).errors == [OperationError("db", ENV, CHANGED)]
    assert sync(ws, repair=True).secrets_repaired == ["db"]


def test_a_value_lost_everywhere_names_a_forced_sync(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (tmp_path / "out/keys.json").unlink()
    errors = sync(ws, repair=True).errors
    assert {(e.secret, e.message) for e in errors} == {("api_key", NO_COPY), ("jwt_secret", NO_COPY)}


def test_the_status_says_how_each_value_last_changed(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    assert secret_status(ws, "session_key").last_change == "generated"
    sync(ws, force=True, secret_name="session_key")
    regenerated = secret_status(ws, "session_key")
    assert (regenerated.last_change, regenerated.last_rotated) == ("regenerated", None)
    execute_rotation(ws, secret_name="postgres_password", force=True)
    assert secret_status(ws, "postgres_password").last_change == "rotated"
    _edit(tmp_path, "session_key", "c" * 32)
    import_values(ws, secret_names=["session_key"])
    imported = secret_status(ws, "session_key")
    assert imported.last_change == "imported" and imported.updated_at != regenerated.updated_at


def test_the_status_of_a_value_another_tool_changed_says_it_changed(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    data = json.loads(ws.lockfile_path.read_text())
    entry = data["secrets"]["session_key"]
    del entry["last_change"]  # SecretZero drops the keys it does not know when it rewrites the file
    entry["updated_at"] = "2099-01-01T00:00:00+00:00"
    ws.lockfile_path.write_text(json.dumps(data))
    assert secret_status(ws, "session_key").last_change == "changed"


def test_a_repair_does_not_change_how_the_value_last_changed(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (tmp_path / "out/app.conf").unlink()
    assert sync(ws).secrets_repaired == ["postgres_password", "redis_password"]
    assert secret_status(ws, "redis_password").last_change == "generated"
