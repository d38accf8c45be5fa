"""One definition over every target kind the service writes (tests/targets/kinds.py), against all
the peers and real tools at once: one sync records every target, a dry run touches nothing, a
rotation reaches every store, drift names exactly the stores changed behind our back, a repair
puts them right, and the CLIs record the same targets as the API."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from django.core.management import call_command
from rest_framework.test import APIClient

from secretsapi.cli.app import cli
from secretsapi.service.targets.registry import kinds
from secretsapi.service.util.hashing import sha256_text
from tests.targets.kinds import EVERY_SECRET, KINDS, SECRETS, Kind, definition, placements

# Changed behind the service's back in the drift and repair tests: a few stores of each sort
# (read back, write-only, an encrypted file, a manifest), none of them the dotenv copy a repair
# reads from, nor a template (a repair never renders one: it holds many secrets' values).
TAMPERED = ("vault/vault_kv", "azure/azure_keyvault", "gitlab/gitlab_group_variable", "github/github_secret",
            "git_crypt/git_crypt_file", "kubernetes/kubernetes_secret", "kubernetes/external_secret")


@pytest.fixture
def project(repo: Path, stores: dict[str, Any], settings: Any) -> Path:
    (repo / "Secretfile.yml").write_text(yaml.safe_dump(definition(stores), sort_keys=False))
    settings.SERVICE_CONFIG = repo / "Secretfile.yml"
    settings.SERVICE_LOCKFILE = None
    return repo


def _lock(root: Path) -> dict[str, Any]:
    return dict(json.loads((root / ".gitsecrets.lock").read_text())["secrets"])


def _declared(stores: dict[str, Any]) -> dict[str, set[str]]:
    ids: dict[str, set[str]] = {secret: set() for secret in SECRETS}
    for secret, kind in placements():
        ids[secret].add(kind.target_id(stores[kind.store], secret))
    return ids


def _held(stores: dict[str, Any]) -> dict[tuple[str, str], str | None]:
    """(secret, kind type) -> what that store holds now, read from the store itself."""
    return {(secret, kind.type): kind.read(stores[kind.store], secret) for secret, kind in placements()}


def _values(stores: dict[str, Any]) -> dict[str, str | None]:
    return {secret: EVERY_SECRET.read(stores[EVERY_SECRET.store], secret) for secret in SECRETS}


def _assert_every_store_holds_what_the_lockfile_records(root: Path, stores: dict[str, Any]) -> None:
    lock, values, held = _lock(root), _values(stores), _held(stores)
    for secret, kind in placements():
        tid, value, stored = kind.target_id(stores[kind.store], secret), values[secret], held[secret, kind.type]
        assert value and stored, (secret, kind.type)
        assert lock[secret]["targets"][tid] == sha256_text(stored), (secret, tid)
        if kind.holds_value:
            assert stored == value, (secret, tid)
        else:
            assert value not in stored, (secret, tid)


def _tampered() -> list[tuple[str, Kind]]:
    chosen = [(secret, kind) for secret, kind in placements() if kind.type in TAMPERED]
    assert len(chosen) == len(TAMPERED)
    return chosen


def _findings(body: dict[str, Any]) -> set[tuple[str, str]]:
    return {(d["details"]["target"], d["details"]["reason"]) for d in body["details"]}


def test_the_definition_covers_every_registered_kind() -> None:
    assert sorted(kind.type for kind in KINDS) == sorted(kind.type for kind in kinds())


def test_one_sync_writes_every_target_and_records_every_target_id(
    authed_api: APIClient, project: Path, stores: dict[str, Any]
) -> None:
    body = authed_api.post("/sync", {}, format="json").json()

    assert (body["errors"], body["secrets_generated"]) == ([], list(SECRETS))
    lock = _lock(project)
    assert {secret: set(entry["targets"]) for secret, entry in lock.items()} == _declared(stores)
    _assert_every_store_holds_what_the_lockfile_records(project, stores)


def test_a_dry_run_touches_no_store_and_writes_no_lockfile(
    authed_api: APIClient, project: Path, stores: dict[str, Any]
) -> None:
    body = authed_api.post("/sync", {"dry_run": True}, format="json").json()

    assert (body["errors"], body["secrets_generated"]) == ([], list(SECRETS))
    # The HTTP peers saw no request at all; moto and the files are checked by reading them.
    peers = [store for store in stores.values() if hasattr(store, "requests")]
    assert peers and all(peer.requests == [] for peer in peers)
    assert set(_held(stores).values()) == {None}
    assert not (project / ".gitsecrets.lock").exists()


def test_a_rotation_of_every_secret_updates_every_store_and_every_hash(
    authed_api: APIClient, project: Path, stores: dict[str, Any]
) -> None:
    authed_api.post("/sync", {}, format="json")
    before, hashes = _held(stores), _lock(project)

    body = authed_api.post("/rotation/execute", {"force": True}, format="json").json()

    assert (body["errors"], sorted(body["rotated"])) == ([], sorted(SECRETS))
    after, lock = _held(stores), _lock(project)
    for secret, kind in placements():
        tid = kind.target_id(stores[kind.store], secret)
        # A manifest only names the value: it stays as it was (checked against the lockfile below).
        if kind.holds_value:
            assert after[secret, kind.type] != before[secret, kind.type], (secret, tid)
            assert lock[secret]["targets"][tid] != hashes[secret]["targets"][tid], (secret, tid)
    assert all(lock[secret]["hash"] != hashes[secret]["hash"] for secret in SECRETS)
    _assert_every_store_holds_what_the_lockfile_records(project, stores)


def test_drift_after_out_of_band_changes_reports_exactly_the_changed_targets(
    authed_api: APIClient, project: Path, stores: dict[str, Any]
) -> None:
    authed_api.post("/sync", {}, format="json")
    expected = {(kind.target_id(stores[kind.store], secret), kind.tamper(stores[kind.store], secret))
                for secret, kind in _tampered()}
    # Write-only stores nobody touched still say they could not be checked, without counting as drift.
    expected |= {(kind.target_id(stores[kind.store], secret), "unverifiable")
                 for secret, kind in placements() if kind.write_only and kind.type not in TAMPERED}

    body = authed_api.post("/drift/check", {}, format="json").json()

    assert _findings(body) == expected
    assert body["has_drift"] is True
    assert sorted(body["secrets_with_drift"]) == sorted({secret for secret, _ in _tampered()})


def test_a_repair_restores_every_changed_store(authed_api: APIClient, project: Path, stores: dict[str, Any]) -> None:
    authed_api.post("/sync", {}, format="json")
    recorded = _held(stores)
    for secret, kind in _tampered():
        kind.tamper(stores[kind.store], secret)

    body = authed_api.post("/sync", {"repair": True}, format="json").json()

    assert (body["errors"], sorted(body["secrets_repaired"])) == ([], sorted({s for s, _ in _tampered()}))
    assert _held(stores) == recorded
    drift = authed_api.post("/drift/check", {}, format="json").json()
    assert drift["has_drift"] is False
    assert {reason for _, reason in _findings(drift)} == {"unverifiable"}


def test_manage_py_sync_records_the_same_target_ids(project: Path, stores: dict[str, Any], db: None) -> None:
    call_command("sync", stdout=StringIO())

    assert {secret: set(entry["targets"]) for secret, entry in _lock(project).items()} == _declared(stores)
    _assert_every_store_holds_what_the_lockfile_records(project, stores)


def test_secretsctl_sync_records_the_same_target_ids(
    project: Path, stores: dict[str, Any], db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)

    result = CliRunner().invoke(cli, ["sync", "-f", "Secretfile.yml"], catch_exceptions=False)

    assert result.exit_code == 0, result.output
    assert {secret: set(entry["targets"]) for secret, entry in _lock(project).items()} == _declared(stores)
    _assert_every_store_holds_what_the_lockfile_records(project, stores)
