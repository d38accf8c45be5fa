"""SecretZero's lockfile upkeep: clean, refresh and import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from secretsapi.service.sync import clean_lockfile, import_values, sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import definition, write_definition

A = {"provider": "local", "kind": "file", "config": {"path": "out/a.env"}}
B = {"provider": "local", "kind": "file", "config": {"path": "out/b.json", "format": "json"}}


def _secret(name: str, *targets: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "kind": "random_string", "config": {"length": 16, "special": False},
            "targets": list(targets)}


def _workspace(folder: Path, *secrets: dict[str, Any]) -> Workspace:
    return Workspace(definition_path=write_definition(folder, definition(*secrets)), lock_timeout=10, environ={})


def _lock(ws: Workspace) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(ws.lockfile_path.read_text())
    return doc


def test_clean_removes_the_entries_of_secrets_no_longer_defined(tmp_path: Path) -> None:
    sync(_workspace(tmp_path, _secret("db", A), _secret("gone", B)))
    ws = _workspace(tmp_path, _secret("db", A))
    result = clean_lockfile(ws)
    assert result.removed == ["gone"]
    assert set(_lock(ws)["secrets"]) == {"db"}


def test_clean_with_dry_run_names_the_orphans_and_keeps_them(tmp_path: Path) -> None:
    sync(_workspace(tmp_path, _secret("db", A), _secret("gone", B)))
    ws = _workspace(tmp_path, _secret("db", A))
    before = ws.lockfile_path.read_text()
    assert clean_lockfile(ws, dry_run=True).removed == ["gone"]
    assert ws.lockfile_path.read_text() == before


def test_refresh_drops_a_target_id_the_definition_no_longer_names(tmp_path: Path) -> None:
    sync(_workspace(tmp_path, _secret("db", A, B)))
    ws = _workspace(tmp_path, _secret("db", B))
    assert sync(ws, refresh=True).refreshed == {"db": ["local/file/out/a.env"]}
    assert list(_lock(ws)["secrets"]["db"]["targets"]) == ["local/file/out/b.json"]


def test_import_records_the_hash_of_the_value_targets_hold_and_generates_nothing(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out/a.env").write_text("db=preseeded\n")
    (tmp_path / "out/b.json").write_text('{"db": "preseeded"}')
    ws = _workspace(tmp_path, _secret("db", A, B))
    result = import_values(ws)
    assert [(row.lock_key, row.status) for row in result.rows] == [("db", "imported")]
    entry = _lock(ws)["secrets"]["db"]
    assert entry["hash"] == sha256_text("preseeded")
    assert entry["targets"] == {"local/file/out/a.env": sha256_text("preseeded"),
                                "local/file/out/b.json": sha256_text("preseeded")}
    assert (tmp_path / "out/a.env").read_text() == "db=preseeded\n"
    assert sync(ws).secrets_generated == []  # the imported value is the secret's now


def test_import_of_targets_holding_different_values_is_an_error_and_records_nothing(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out/a.env").write_text("db=one\n")
    (tmp_path / "out/b.json").write_text('{"db": "two"}')
    ws = _workspace(tmp_path, _secret("db", A, B))
    result = import_values(ws)
    assert [error.secret for error in result.errors] == ["db"]
    assert "one" not in result.errors[0].message and "two" not in result.errors[0].message
    assert not ws.lockfile_path.exists() or "db" not in _lock(ws)["secrets"]


def test_import_with_dry_run_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out/a.env").write_text("db=preseeded\n")
    ws = _workspace(tmp_path, _secret("db", A))
    result = import_values(ws, dry_run=True)
    assert [row.status for row in result.rows] == ["would_import"]
    assert not ws.lockfile_path.exists()


def test_import_of_a_secret_no_target_holds_skips_it(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, _secret("db", A))
    assert [(row.status, row.detail) for row in import_values(ws).rows] == [("skipped", "not_retrievable")]


def test_sync_with_refresh_drops_a_removed_target_and_a_plain_sync_keeps_it(tmp_path: Path) -> None:
    sync(_workspace(tmp_path, _secret("db", A, B)))
    ws = _workspace(tmp_path, _secret("db", B))
    assert sync(ws).refreshed == {}
    assert "local/file/out/a.env" in _lock(ws)["secrets"]["db"]["targets"]
    assert sync(ws, refresh=True, dry_run=True).refreshed == {"db": ["local/file/out/a.env"]}
    assert "local/file/out/a.env" in _lock(ws)["secrets"]["db"]["targets"]
    result = sync(ws, refresh=True)
    assert result.refreshed == {"db": ["local/file/out/a.env"]}
    assert list(_lock(ws)["secrets"]["db"]["targets"]) == ["local/file/out/b.json"]
