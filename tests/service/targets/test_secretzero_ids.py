"""SecretZero's target ids: a lockfile it wrote is read as tracking the targets it records, and the
kinds without an id of their own record its id, except where two targets of one secret share it."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from secretsapi.service.definition.model import TargetSpec
from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import check_rotation, execute_rotation
from secretsapi.service.status import secret_status
from secretsapi.service.sync import sync
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.secretzero_ids import aliases, recorded_hash, secretzero_target_id
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import definition, lock_entries, secret, target, workspace
from tests.peers.github_server import GitHubServer

HASH = "a" * 64
NO_STORES = TargetContext(base_dir=Path("."), providers={}, value_of=lambda key: None, lock_keys=())


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
    assert aliases(_target("local", "file", path="out/a.env"), NO_STORES) == ("local/file/out/a.env", "local/file/")


def test_our_id_wins_over_an_alias_and_an_alias_is_found_without_it() -> None:
    target = _target("vault", "vault_kv", path="app/config")
    both = {"vault/vault_kv/secret/app/config": HASH, "vault/vault_kv/app/config": "b" * 64}
    ours = "vault/vault_kv/secret/app/config"
    assert recorded_hash(both, ours, target, NO_STORES) == HASH
    assert recorded_hash({"vault/vault_kv/app/config": HASH}, ours, target, NO_STORES) == HASH
    assert recorded_hash({}, ours, target, NO_STORES) is None


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


# -- the ids the kinds without one in the spec record, through the engine and the GitHub peer ---------

REPO = "repos/acme/api"


@pytest.fixture
def server(github: GitHubServer) -> GitHubServer:
    github.add_repo("acme", "api")
    github.add_repo("acme", "web")
    return github


def _github(tmp_path: Path, server: GitHubServer, *targets: dict[str, Any], alias: str = "github") -> Workspace:
    provider = {"kind": "github", "auth": {"kind": "token", "config": {"token": server.token}},
                "config": {"api_url": server.url}}
    return workspace(tmp_path, {alias: provider}, secret("deploy_token", *targets))


def test_a_secret_with_one_github_target_records_secretzeros_id(tmp_path: Path, server: GitHubServer) -> None:
    ws = _github(tmp_path, server, target("github", "github_secret", owner="acme", repo="api"))
    assert sync(ws).errors == []
    value = server.value(REPO, "DEPLOY_TOKEN")
    assert value is not None
    assert lock_entries(ws)["deploy_token"]["targets"] == {"github/github_secret/": sha256_text(value)}


def test_a_github_target_with_a_name_records_it_at_the_end_of_the_id(tmp_path: Path, server: GitHubServer) -> None:
    ws = _github(tmp_path, server, target("github", "github_secret", owner="acme", repo="api", name="ci"))
    assert sync(ws).errors == []
    assert list(lock_entries(ws)["deploy_token"]["targets"]) == ["github/github_secret/ci"]
    assert server.value(REPO, "DEPLOY_TOKEN") is not None  # `name` names the target, not the secret


def test_the_provider_alias_is_kept_in_the_id(tmp_path: Path, server: GitHubServer) -> None:
    ws = _github(tmp_path, server, target("gh", "github_secret", owner="acme", repo="api"), alias="gh")
    assert sync(ws).errors == []
    assert list(lock_entries(ws)["deploy_token"]["targets"]) == ["gh/github_secret/"]


def test_two_github_targets_of_one_secret_each_record_their_own_id_and_both_are_tracked(
    tmp_path: Path, server: GitHubServer
) -> None:
    # SecretZero would record both as github/github_secret/, one key for two repositories.
    ws = _github(tmp_path, server, target("local", "file", path="out/ci.env"),
                 target("github", "github_secret", owner="acme", repo="api"),
                 target("github", "github_secret", owner="acme", repo="web"))
    assert sync(ws).errors == []
    values = {server.value(REPO, "DEPLOY_TOKEN"), server.value("repos/acme/web", "DEPLOY_TOKEN")}
    assert len(values) == 1 and None not in values
    digest = sha256_text(values.pop() or "")
    ids = ["local/file/out/ci.env", "github/github_secret/acme/api", "github/github_secret/acme/web"]
    assert lock_entries(ws)["deploy_token"]["targets"] == dict.fromkeys(ids, digest)
    assert secret_status(ws, "deploy_token").targets == ids
    assert {(d.details["target"], d.details["reason"]) for d in detect_drift(ws).details} == {
        ("github/github_secret/acme/api", "unverifiable"), ("github/github_secret/acme/web", "unverifiable")}

    server.delete("repos/acme/web", "DEPLOY_TOKEN")
    assert {(d.details["target"], d.details["reason"]) for d in detect_drift(ws).details} == {
        ("github/github_secret/acme/api", "unverifiable"), ("github/github_secret/acme/web", "target_missing")}


def test_two_github_targets_told_apart_by_name_each_record_secretzeros_id(
    tmp_path: Path, server: GitHubServer
) -> None:
    ws = _github(tmp_path, server, target("github", "github_secret", owner="acme", repo="api", name="api"),
                 target("github", "github_secret", owner="acme", repo="web", name="web"))
    assert sync(ws).errors == []
    assert list(lock_entries(ws)["deploy_token"]["targets"]) == ["github/github_secret/api", "github/github_secret/web"]


def test_a_lockfile_secretzero_wrote_is_read_as_tracking_the_github_target(
    tmp_path: Path, server: GitHubServer
) -> None:
    ws = _github(tmp_path, server, target("github", "github_secret", owner="acme", repo="api"))
    sync(ws)
    # SecretZero wrote the secret an hour ago and recorded it half an hour ago, with its own entry
    # (no write times of ours).
    now = datetime.now(UTC)
    server.overwrite(REPO, "DEPLOY_TOKEN", "kept", at=now - timedelta(hours=1))
    stamp, digest = (now - timedelta(minutes=30)).isoformat(), sha256_text("kept")
    entry = {"hash": digest, "created_at": stamp, "updated_at": stamp, "targets": {"github/github_secret/": digest}}
    ws.lockfile_path.write_text(json.dumps({"version": "1.0", "secrets": {"deploy_token": entry}}))
    writes = len(server.requests)

    [item] = detect_drift(ws).details
    assert (item.details["target"], item.details["reason"]) == ("github/github_secret/", "unverifiable")
    assert item.details["changed_after_record"] is False
    assert secret_status(ws, "deploy_token").targets == ["github/github_secret/"]
    assert sync(ws).secrets_generated == []
    assert [method for method, _ in server.requests[writes:] if method != "GET"] == []
    assert server.value(REPO, "DEPLOY_TOKEN") == "kept"


def test_a_lockfile_secretzero_wrote_with_one_id_for_two_github_targets_tracks_both(
    tmp_path: Path, server: GitHubServer
) -> None:
    ws = _github(tmp_path, server, target("github", "github_secret", owner="acme", repo="api"),
                 target("github", "github_secret", owner="acme", repo="web"))
    sync(ws)
    now = datetime.now(UTC)
    for scope in (REPO, "repos/acme/web"):
        server.overwrite(scope, "DEPLOY_TOKEN", "kept", at=now - timedelta(hours=1))
    stamp, digest = (now - timedelta(minutes=30)).isoformat(), sha256_text("kept")
    entry = {"hash": digest, "created_at": stamp, "updated_at": stamp, "targets": {"github/github_secret/": digest}}
    ws.lockfile_path.write_text(json.dumps({"version": "1.0", "secrets": {"deploy_token": entry}}))
    writes = len(server.requests)

    assert {(d.details["target"], d.details["reason"]) for d in detect_drift(ws).details} == {
        ("github/github_secret/acme/api", "unverifiable"), ("github/github_secret/acme/web", "unverifiable")}
    assert sync(ws).secrets_generated == []
    assert [method for method, _ in server.requests[writes:] if method != "GET"] == []


def test_a_lockfile_an_earlier_version_wrote_with_the_descriptive_id_still_tracks_the_target(
    tmp_path: Path, server: GitHubServer
) -> None:
    # Before this service recorded SecretZero's ids, it recorded its own: an upgrade must neither
    # rewrite the target, nor call it untracked, nor take it for a move in a rotation.
    ws = _github(tmp_path, server, target("github", "github_secret", owner="acme", repo="api"))
    sync(ws)
    lock = json.loads(ws.lockfile_path.read_text())
    targets = lock["secrets"]["deploy_token"]["targets"]
    targets["github/github_secret/acme/api"] = targets.pop("github/github_secret/")
    ws.lockfile_path.write_text(json.dumps(lock))
    writes = len(server.requests)

    assert [d.details["reason"] for d in detect_drift(ws).details] == ["unverifiable"]
    assert sync(ws).errors == []
    assert [method for method, _ in server.requests[writes:] if method != "GET"] == []
    rotated = execute_rotation(ws, force=True)
    assert (rotated.rotated, rotated.failed) == (["deploy_token"], [])
