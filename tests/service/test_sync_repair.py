"""Sync with repair: recorded values put back into broken targets, without rotating anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.drift import detect_drift
from secretsapi.service.results import OperationError
from secretsapi.service.state import repair as repair_module
from secretsapi.service.state.readback import Copy, UnitReadBack
from secretsapi.service.state.repair import NO_COPY_HELD
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import definition, write_definition


def _two_targets(name: str = "db") -> dict[str, Any]:
    return {"name": name, "kind": "random_password", "targets": [
        {"provider": "local", "kind": "file", "config": {"path": "out/a.env"}},
        {"provider": "local", "kind": "file", "config": {"path": "out/b.json", "format": "json"}},
    ]}


def _synced(folder: Path, *secrets: dict[str, Any]) -> Workspace:
    ws = Workspace(definition_path=write_definition(folder, definition(*(secrets or (_two_targets(),)))),
                   lock_timeout=10, environ={})
    sync(ws)
    return ws


def _entry(ws: Workspace, name: str = "db") -> dict[str, Any]:
    entry: dict[str, Any] = json.loads(ws.lockfile_path.read_text())["secrets"][name]
    return entry


def test_a_missing_target_gets_the_value_of_another_target_and_the_entry_stays(tmp_path: Path) -> None:
    ws = _synced(tmp_path)
    before = _entry(ws)
    (tmp_path / "out/a.env").unlink()
    result = sync(ws, repair=True)
    assert (result.secrets_repaired, result.secrets_generated, result.errors) == (["db"], [], [])
    after = _entry(ws)
    provenance = after.pop("target_provenance")
    assert after == {key: value for key, value in before.items() if key != "target_provenance"}
    assert len(provenance["local/file/out/a.env"]) == 2  # the first write and the repair, as SecretZero records
    assert detect_drift(ws).has_drift is False  # a.env holds the recorded value again


def test_a_target_holding_another_value_gets_the_recorded_value_back(tmp_path: Path) -> None:
    ws = _synced(tmp_path)
    (tmp_path / "out/b.json").write_text(json.dumps({"db": "someone-else"}))
    value_hash = _entry(ws)["hash"]
    assert sync(ws, repair=True).secrets_repaired == ["db"]
    assert _entry(ws)["hash"] == value_hash
    assert detect_drift(ws).has_drift is False


def test_a_secret_without_a_verified_copy_is_left_alone_and_named_in_errors(tmp_path: Path) -> None:
    ws = _synced(tmp_path)
    before = _entry(ws)
    (tmp_path / "out/a.env").unlink()
    (tmp_path / "out/b.json").write_text(json.dumps({"db": "someone-else"}))
    result = sync(ws, repair=True)
    assert result.secrets_repaired == []
    assert result.errors == [OperationError("db", "local/file/out/b.json", NO_COPY_HELD)]
    assert not (tmp_path / "out/a.env").exists()
    assert _entry(ws) == before


def test_a_dry_run_repair_reports_what_it_would_repair_and_writes_nothing(tmp_path: Path) -> None:
    ws = _synced(tmp_path)
    (tmp_path / "out/a.env").unlink()
    lock_before = ws.lockfile_path.read_bytes()
    result = sync(ws, repair=True, dry_run=True)
    assert (result.secrets_repaired, result.secrets_skipped, result.dry_run) == (["db"], [], True)
    assert "1 would be repaired" in result.message
    assert not (tmp_path / "out/a.env").exists()
    assert ws.lockfile_path.read_bytes() == lock_before


def test_a_repair_keeps_the_rotation_metadata(tmp_path: Path) -> None:
    ws = _synced(tmp_path)
    data = json.loads(ws.lockfile_path.read_text())
    data["secrets"]["db"].update(last_rotated="2026-01-01T00:00:00+00:00", rotation_count=3)
    ws.lockfile_path.write_text(json.dumps(data))
    (tmp_path / "out/a.env").unlink()
    sync(ws, repair=True)
    assert (_entry(ws)["last_rotated"], _entry(ws)["rotation_count"]) == ("2026-01-01T00:00:00+00:00", 3)


def test_a_target_the_lockfile_does_not_record_is_written_and_recorded(tmp_path: Path) -> None:
    ws = _synced(tmp_path)
    data = json.loads(ws.lockfile_path.read_text())
    del data["secrets"]["db"]["targets"]["local/file/out/a.env"]
    ws.lockfile_path.write_text(json.dumps(data))
    assert sync(ws, repair=True).secrets_repaired == ["db"]
    assert set(_entry(ws)["targets"]) == {"local/file/out/a.env", "local/file/out/b.json"}
    assert detect_drift(ws).has_drift is False


def test_a_repair_with_nothing_broken_writes_nothing(tmp_path: Path) -> None:
    ws = _synced(tmp_path)
    lock_before = ws.lockfile_path.read_bytes()
    result = sync(ws, repair=True)
    assert (result.secrets_repaired, result.secrets_skipped) == ([], ["db"])
    assert ws.lockfile_path.read_bytes() == lock_before


def test_a_secret_generated_by_the_same_sync_is_not_repaired(tmp_path: Path) -> None:
    ws = _synced(tmp_path)
    write_definition(tmp_path, definition(_two_targets(), _two_targets("new")))
    (tmp_path / "out/a.env").write_text("")  # db's copy there is gone
    result = sync(ws, repair=True)
    assert (result.secrets_generated, result.secrets_repaired) == (["new"], ["db"])
    assert detect_drift(ws).has_drift is False


def test_a_merge_false_file_keeps_its_other_keys_when_one_is_repaired(tmp_path: Path) -> None:
    exclusive = {"provider": "local", "kind": "file", "config": {"path": "out/only.env", "merge": False}}
    one = {**_two_targets("one"), "targets": [*_two_targets()["targets"], exclusive]}
    two = {"name": "two", "kind": "random_password", "targets": [exclusive]}
    ws = _synced(tmp_path, one, two)
    (tmp_path / "out/b.json").write_text(json.dumps({"one": "x"}))
    assert sync(ws, repair=True).secrets_repaired == ["one"]
    assert detect_drift(ws).has_drift is False


def test_a_target_that_is_its_own_verified_copy_is_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A misencoded dotenv line: standard readers see another value, read_back finds the recorded
    # one in the same target (ReadBack.misencoded_value), so the repair rewrites it in place.
    ws = _synced(tmp_path, {"name": "db", "kind": "random_hex", "targets": [
        {"provider": "local", "kind": "file", "config": {"path": "out/a.env"}}]})
    value = (tmp_path / "out/a.env").read_text().strip().split("=", 1)[1].strip("'\"")
    (tmp_path / "out/a.env").write_text("db=misread\n")
    found = UnitReadBack(Copy("local/file/out/a.env", value), None, ())
    monkeypatch.setattr(repair_module, "read_back_all", lambda units, ctx: [found for _ in units])
    assert sync(ws, repair=True).secrets_repaired == ["db"]
    monkeypatch.undo()
    assert detect_drift(ws).has_drift is False
