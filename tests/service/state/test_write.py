"""The lockfile's record of the definition (the ``secretfile`` block) after each kind of write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.definition.model import Definition
from secretsapi.service.drift import detect_drift
from secretsapi.service.loading.loader import load_definition
from secretsapi.service.state import lock_state, locks, write
from secretsapi.service.state.lock_state import LockfilePaths
from secretsapi.service.state.lockfile import LockDocument
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import definition, file_secret, write_definition


def _workspace(folder: Path, doc: dict[str, Any], **kwargs: Any) -> Workspace:
    return Workspace(definition_path=write_definition(folder, doc), lock_timeout=10, environ={}, **kwargs)


def _block(ws: Workspace) -> dict[str, Any]:
    block: dict[str, Any] = json.loads(ws.lockfile_path.read_text())["secretfile"]
    return block


def test_a_sync_in_which_a_secret_failed_still_records_the_definition(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()  # a folder where the file should be: that target fails
    ws = _workspace(tmp_path, definition(file_secret("good"), file_secret("bad", "busy"),
                                         variables={"env": "dev"}))
    result = sync(ws)
    assert result.secrets_failed == ["bad"]
    loaded = load_definition(ws.definition_path, environ={})
    block = _block(ws)
    assert {k: block[k] for k in ("filename", "hash", "var_files", "variables_hash", "manifest_spec_version")} == {
        "filename": "Secretfile.yml", "hash": loaded.text_hash, "var_files": [],
        "variables_hash": loaded.variables_hash, "manifest_spec_version": "1",
    }


def test_a_sync_with_nothing_to_generate_records_a_missing_definition_record(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, definition(file_secret("good")))
    sync(ws)
    data = json.loads(ws.lockfile_path.read_text())
    del data["secretfile"]
    ws.lockfile_path.write_text(json.dumps(data))
    assert sync(ws).secrets_generated == []
    assert _block(ws)["hash"] == load_definition(ws.definition_path, environ={}).text_hash


def test_a_sync_with_nothing_to_generate_leaves_a_current_record_byte_for_byte(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, definition(file_secret("good")))
    sync(ws)
    before = ws.lockfile_path.read_bytes()
    sync(ws)
    assert ws.lockfile_path.read_bytes() == before


def test_var_files_are_recorded_by_their_names_as_secretzero_records_them(tmp_path: Path) -> None:
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "dev.szvar").write_text("env: dev\n")
    ws = _workspace(tmp_path, definition(file_secret("good"), variables={"env": "x"}), var_files=("env/dev.szvar",))
    sync(ws)
    assert _block(ws)["var_files"] == ["dev.szvar"]


def test_drift_still_reports_a_changed_definition_after_a_sync_that_skipped_the_secret(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, definition(file_secret("old", config={"length": 20})))
    sync(ws)
    write_definition(tmp_path, definition(file_secret("old", config={"length": 30}), file_secret("new")))
    sync(ws)  # generates "new" only; the record now names the edited file
    reasons = {(item.secret, item.details["reason"]) for item in detect_drift(ws).details}
    assert reasons == {("old", "definition_changed")}


def test_the_recorded_variables_hash_with_a_var_file_is_the_one_secretzero_records(tmp_path: Path) -> None:
    # SecretZero 0.14.23 recorded this variables_hash syncing the same file with `--var-file qa.szvar`.
    (tmp_path / "qa.szvar").write_text("env: qa\nnested:\n  b: y\n")
    doc = definition(file_secret("tok", "out/{{ var.env }}.json", fmt="json"),
                     variables={"env": "dev", "nested": {"a": 1, "b": "x"}})
    ws = _workspace(tmp_path, doc, var_files=("qa.szvar",))
    sync(ws)
    assert _block(ws)["variables_hash"] == "26e075afc6f3b577cf5e27fc223c5ea05e1e5eda5a6fbdf43c0c116034efa9b8"


def test_a_sync_that_read_the_lockfile_mid_write_does_not_report_the_new_value_as_foreign(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another writer has written its target but not yet committed its lockfile (it holds the
    # locks) when this sync reads unlocked: the file's value is new, the record old.
    ws = _workspace(tmp_path, definition(file_secret("db")))
    sync(ws)
    before_rotation = ws.lockfile_path.read_bytes()
    sync(ws, force=True)
    committed = ws.lockfile_path.read_bytes()
    real_read = lock_state.read_state

    def read(paths: LockfilePaths, loaded: Definition, *, exact: bool = False) -> LockDocument:
        if not exact:  # the unlocked read
            ws.lockfile_path.write_bytes(before_rotation)
            try:
                return real_read(paths, loaded, exact=True)
            finally:
                ws.lockfile_path.write_bytes(committed)
        return real_read(paths, loaded, exact=exact)

    monkeypatch.setattr(write, "read_state", read)
    result = sync(ws)
    assert (result.errors, result.secrets_skipped) == ([], ["db"])


def _counted_lockfile_locks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every time a write takes the lockfile lock, its path."""
    taken: list[Path] = []
    real = locks.lockfile_lock

    def counted(path: Path, **kwargs: Any) -> Any:
        taken.append(path)
        return real(path, **kwargs)

    monkeypatch.setattr(locks, "lockfile_lock", counted)
    return taken


def test_a_sync_that_refreshes_generates_and_repairs_takes_the_lockfile_lock_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copies = {**file_secret("a"), "targets": [
        {"provider": "local", "kind": "file", "config": {"path": "out/a.env"}},
        {"provider": "local", "kind": "file", "config": {"path": "out/a.json"}}]}
    ws = _workspace(tmp_path, definition(copies, file_secret("b", "out/b.env")))
    sync(ws)
    data = json.loads(ws.lockfile_path.read_text())
    del data["secrets"]["b"]  # to generate
    data["secrets"]["a"]["targets"]["local/file/out/gone.env"] = data["secrets"]["a"]["hash"]  # to refresh
    ws.lockfile_path.write_text(json.dumps(data))
    (tmp_path / "out/a.json").unlink()  # to repair
    taken = _counted_lockfile_locks(monkeypatch)
    result = sync(ws, refresh=True)
    assert (result.secrets_generated, result.secrets_repaired, result.refreshed) == (
        ["b"], ["a"], {"a": ["local/file/out/gone.env"]})
    assert len(taken) == 1
    assert detect_drift(ws).has_drift is False


def test_a_sync_with_nothing_to_do_takes_no_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path, definition(file_secret("a")))
    sync(ws)
    taken = _counted_lockfile_locks(monkeypatch)
    assert sync(ws).secrets_skipped == ["a"]
    assert taken == []
