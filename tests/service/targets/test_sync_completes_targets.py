"""A plain sync completes the targets of existing secrets, as SecretZero's sync does: a deleted
target file, a target added to the definition and a remote target that failed get the recorded
value; a target holding another value is reported, and left to ``repair``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from secretsapi.service.results import OperationError
from secretsapi.service.state.repair import CHANGED
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import definition, vault_provider, write_definition
from tests.peers.vault_server import VaultServer

A = {"provider": "local", "kind": "file", "config": {"path": "out/a.env"}}
B = {"provider": "local", "kind": "file", "config": {"path": "out/b.json", "format": "json"}}


def _workspace(folder: Path, *targets: dict[str, Any], **top: Any) -> Workspace:
    doc = definition({"name": "db", "kind": "random_string", "config": {"length": 20, "special": False},
                      "targets": list(targets)}, **top)
    return Workspace(definition_path=write_definition(folder, doc), lock_timeout=10, environ={})


def _entry(ws: Workspace) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads(ws.lockfile_path.read_text())["secrets"]["db"]
    return entry


def _value(folder: Path) -> str:
    value: str = json.loads((folder / "out/b.json").read_text())["db"]
    return value


def test_a_deleted_target_file_gets_the_recorded_value_back(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, A, B)
    sync(ws)
    before = _entry(ws)
    (tmp_path / "out/a.env").unlink()
    result = sync(ws)
    assert (result.secrets_repaired, result.secrets_generated, result.errors) == (["db"], [], [])
    assert (tmp_path / "out/a.env").read_text().strip() == f"db={_value(tmp_path)}"
    after = _entry(ws)
    assert after.pop("target_provenance")["local/file/out/a.env"][-1]["actor"]["client"] == "secretsapi"
    assert after == {key: value for key, value in before.items() if key != "target_provenance"}
    assert result.message == "Sync complete: 0 secret(s) generated, 0 skipped, 1 repaired."


def test_a_target_added_to_the_definition_gets_the_value_and_is_recorded(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, B)
    sync(ws)
    ws = _workspace(tmp_path, B, A)
    result = sync(ws)
    assert result.secrets_repaired == ["db"]
    assert (tmp_path / "out/a.env").read_text().strip() == f"db={_value(tmp_path)}"
    assert set(_entry(ws)["targets"]) == {"local/file/out/a.env", "local/file/out/b.json"}


def test_a_target_holding_another_value_is_an_error_on_every_plain_sync_and_is_left_alone(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, A, B)
    sync(ws)
    (tmp_path / "out/a.env").write_text("db=someone-else\n")
    for _ in range(2):
        result = sync(ws)
        assert result.errors == [OperationError("db", "local/file/out/a.env", CHANGED)]
        assert result.secrets_skipped == []
        assert result.message == "Sync incomplete: 0 secret(s) generated, 0 skipped, 1 error(s)."
    assert (tmp_path / "out/a.env").read_text() == "db=someone-else\n"


def test_repair_still_puts_the_recorded_value_over_another_value(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, A, B)
    sync(ws)
    (tmp_path / "out/a.env").write_text("db=someone-else\n")
    result = sync(ws, repair=True)
    assert (result.secrets_repaired, result.errors) == (["db"], [])
    assert sync(ws).errors == []


def test_a_dry_run_names_the_targets_it_would_complete_and_writes_nothing(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, A, B)
    sync(ws)
    (tmp_path / "out/a.env").unlink()
    result = sync(ws, dry_run=True)
    assert result.secrets_repaired == ["db"]
    assert not (tmp_path / "out/a.env").exists()


def test_a_remote_target_that_failed_is_written_by_the_next_plain_sync(tmp_path: Path, vault: VaultServer) -> None:
    vault_target = {"provider": "vault", "kind": "vault_kv", "config": {"path": "app/config", "key": "token"}}
    ws = _workspace(tmp_path, B, vault_target, providers={"vault": vault_provider(vault.url)})
    vault.token = "not-yet"  # every call is refused with 403 until the token is right
    first = sync(ws)
    assert first.secrets_generated == ["db"] and first.errors
    assert list(_entry(ws)["targets"]) == ["local/file/out/b.json"]

    second = sync(ws)  # still refused: reported again, not skipped
    assert second.secrets_skipped == [] and second.message.startswith("Sync incomplete: ")
    assert second.errors and second.errors[0].target == "vault/vault_kv/secret/app/config#token"

    vault.token = "root-token"
    third = sync(ws)
    assert (third.secrets_repaired, third.errors) == (["db"], [])
    assert vault.data("secret", "app/config") == {"token": _value(tmp_path)}
    assert set(_entry(ws)["targets"]) == {"local/file/out/b.json", "vault/vault_kv/secret/app/config#token"}
    assert sync(ws).errors == []


def test_a_provider_read_source_imports_the_value_a_vault_path_holds(tmp_path: Path, vault: VaultServer) -> None:
    vault.put("secret", "app/seed", {"token": "vault-held"})
    source = {"kind": "provider_read",
              "config": {"provider": "vault", "kind": "vault_kv", "read": {"path": "app/seed", "key": "token"}}}
    doc = definition({"name": "db", "kind": "random_string", "source": source, "targets": [B]},
                     providers={"vault": vault_provider(vault.url)})
    ws = Workspace(definition_path=write_definition(tmp_path, doc), lock_timeout=10, environ={})
    result = sync(ws)
    assert (result.sources, result.errors) == ({"db": "provider_read"}, [])
    assert _value(tmp_path) == "vault-held"


def test_a_provider_read_source_that_finds_nothing_fails_its_secret(tmp_path: Path, vault: VaultServer) -> None:
    source = {"kind": "provider_read",
              "config": {"provider": "vault", "kind": "vault_kv", "read": {"path": "app/none", "key": "token"}}}
    doc = definition({"name": "db", "kind": "random_string", "source": source, "targets": [B]},
                     providers={"vault": vault_provider(vault.url)})
    ws = Workspace(definition_path=write_definition(tmp_path, doc), lock_timeout=10, environ={})
    result = sync(ws)
    assert result.secrets_failed == ["db"]
    assert result.errors[0].message.startswith("source resolution failed: provider_read source vault/vault_kv")
