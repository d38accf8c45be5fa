"""Targets that a lockfile SecretZero wrote records under SecretZero's own ids are recognised."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from secretsapi.service.definition.model import TargetSpec
from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import check_rotation
from secretsapi.service.targets.secretzero_ids import aliases, recorded_hash, secretzero_target_id
from secretsapi.service.workspace import Workspace
from tests.factories import definition

HASH = "a" * 64


def _target(provider: str, kind: str, **config: Any) -> TargetSpec:
    return TargetSpec(provider=provider, kind=kind, config=config)


def test_secretzero_ids_take_the_first_identifier_key_it_knows() -> None:
    assert secretzero_target_id(_target("vault", "vault_kv", path="app/config", mount_point="kv")) == (
        "vault/vault_kv/app/config")
    ssm = _target("aws", "ssm_parameter", name="/app/db", path="x")
    assert secretzero_target_id(ssm) == "aws/ssm_parameter//app/db"
    assert secretzero_target_id(_target("k8s", "kubernetes_secret", secret_name="app")) == "k8s/kubernetes_secret/"
    assert secretzero_target_id(_target("local", "file", path="/srv/.env")) == "local/file//srv/.env"


def test_a_file_target_may_also_be_recorded_under_the_old_pathless_id() -> None:
    assert aliases(_target("local", "file", path="out/a.env")) == ("local/file/out/a.env", "local/file/")


def test_our_id_wins_over_an_alias_and_an_alias_is_found_without_it() -> None:
    target = _target("vault", "vault_kv", path="app/config")
    both = {"vault/vault_kv/secret/app/config": HASH, "vault/vault_kv/app/config": "b" * 64}
    assert recorded_hash(both, "vault/vault_kv/secret/app/config", target) == HASH
    assert recorded_hash({"vault/vault_kv/app/config": HASH}, "vault/vault_kv/secret/app/config", target) == HASH
    assert recorded_hash({}, "vault/vault_kv/secret/app/config", target) is None


def _secretzero_lockfile(tmp_path: Path, target_ids: tuple[str, ...], value: str = "kept") -> Workspace:
    """A definition and the lockfile SecretZero would have written for it, with its target ids."""
    vault = {"provider": "vault", "kind": "vault_kv", "config": {"path": "app/config"}}
    local = {"provider": "local", "kind": "file", "config": {"path": "out/app.env"}}
    (tmp_path / "Secretfile.yml").write_text(yaml.safe_dump(definition(
        {"name": "db", "kind": "random_hex", "rotation_period": "30d", "targets": [local, vault]})))
    (tmp_path / "out").mkdir()
    (tmp_path / "out/app.env").write_text(f"db={value}\n")
    stamp = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    digest = hashlib.sha256(value.encode()).hexdigest()
    entry = {"hash": digest, "created_at": stamp, "updated_at": stamp,
             "targets": dict.fromkeys(target_ids, digest)}
    (tmp_path / ".gitsecrets.lock").write_text(json.dumps({"version": "1.0", "secrets": {"db": entry}}))
    return Workspace(definition_path=tmp_path / "Secretfile.yml", environ={})


def test_a_rotation_does_not_take_secretzero_ids_for_a_move(tmp_path: Path) -> None:
    ws = _secretzero_lockfile(tmp_path, ("local/file/", "vault/vault_kv/app/config"))
    (result,) = check_rotation(ws).results
    assert "move" not in result.status


def test_drift_reads_a_file_recorded_under_the_pathless_id(tmp_path: Path) -> None:
    ws = _secretzero_lockfile(tmp_path, ("local/file/",))
    found = [(d.details["reason"], d.details.get("target")) for d in detect_drift(ws, secret_name="db").details]
    assert ("untracked_target", "local/file/out/app.env") not in found
    assert ("value_changed", "local/file/out/app.env") not in found
