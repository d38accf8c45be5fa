"""Infisical targets through the HTTP API and the management commands against the Infisical test
server: sync, rotation, drift, repair and dry run; discovery and validation; a throttled store; one
sync with the other remote kinds; and credentials never shown in answers, audit rows, the lockfile,
logs or errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from audit.models import AuditEntry
from secretsapi.service.drift import detect_drift
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.validate import validate_document
from secretsapi.service.workspace import Workspace
from tests.factories import (
    aws_provider,
    command_exit,
    kube_provider,
    lock_entries,
    secret,
    target,
    vault_provider,
    workspace,
)
from tests.peers.infisical_server import InfisicalServer
from tests.peers.kubernetes_server import KubernetesServer
from tests.peers.vault_server import VaultServer

WS = "ws-app"
# SecretZero's ids: `secret_path` and `secret_name` are not among the keys it takes one from.
IDS = {"db": "infisical/infisical/", "api": "infisical/infisical/"}


def _providers(server: InfisicalServer) -> dict[str, Any]:
    """Universal Auth, so both credentials (client secret and access token) must stay hidden."""
    return {"infisical": {"kind": "infisical", "auth": {"kind": "universal_auth", "config": {
        "client_id": server.client_id, "client_secret": server.client_secret}},
        "config": {"api_url": f"{server.url}/api", "workspace_id": WS}}}


@pytest.fixture
def server(infisical: InfisicalServer) -> InfisicalServer:
    infisical.add_project(WS, folders=("/backend",))
    return infisical


@pytest.fixture
def defined(tmp_path: Path, settings: Any, server: InfisicalServer) -> Workspace:
    """Each secret also goes to a dotenv file: the copy a repair takes the recorded value from."""
    env_file = target("local", "file", path="out/app.env")
    ws = workspace(
        tmp_path, _providers(server),
        secret("db", target("infisical", "infisical", environment="prod", secret_path="/backend",
                            secret_name="DB_PASSWORD"), env_file),
        secret("api", target("infisical", "infisical"), env_file),
    )
    settings.SERVICE_CONFIG = ws.definition_path
    settings.SERVICE_LOCKFILE = None
    return ws


def _stored(server: InfisicalServer) -> dict[str, str | None]:
    return {"db": server.value(WS, "prod", "DB_PASSWORD", "/backend"), "api": server.value(WS, "dev", "api")}


def _credentials(server: InfisicalServer) -> list[str]:
    return [server.client_secret, *server.access_tokens]


def test_the_api_syncs_rotates_drifts_and_repairs(
    authed_api: APIClient, defined: Workspace, server: InfisicalServer
) -> None:
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["errors"] == [] and sorted(body["secrets_generated"]) == ["api", "db"]
    first, lock = _stored(server), lock_entries(defined)
    for name, target_id in IDS.items():
        assert lock[name]["targets"][target_id] == sha256_text(first[name] or "")
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False

    rotated = authed_api.post("/rotation/execute", {"force": True}, format="json").json()
    assert sorted(rotated["rotated"]) == ["api", "db"] and rotated["errors"] == []
    second = _stored(server)
    assert all(second[name] != first[name] for name in IDS)

    server.put(WS, "prod", "DB_PASSWORD", "edited-in-the-dashboard", "/backend")
    server.remove(WS, "dev", "api")
    drift = authed_api.post("/drift/check", {}, format="json").json()
    assert drift["has_drift"] is True
    assert {(d["secret"], d["details"]["target"], d["details"]["reason"]) for d in drift["details"]} == {
        ("db", IDS["db"], "value_changed"), ("api", IDS["api"], "target_missing")}

    repaired = authed_api.post("/sync", {"repair": True}, format="json").json()
    assert sorted(repaired["secrets_repaired"]) == ["api", "db"] and repaired["errors"] == []
    assert _stored(server) == second
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False


def test_an_api_dry_run_touches_nothing(authed_api: APIClient, defined: Workspace, server: InfisicalServer) -> None:
    body = authed_api.post("/sync", {"dry_run": True}, format="json").json()
    assert sorted(body["secrets_generated"]) == ["api", "db"]
    assert server.requests == [] and not defined.lockfile_path.exists()


def test_the_commands_sync_rotate_detect_drift_repair_and_drycommand_exit(
    db: None, defined: Workspace, server: InfisicalServer
) -> None:
    assert command_exit("sync", "--dry-run") == 0
    assert server.requests == []
    assert command_exit("sync") == 0
    first = _stored(server)
    assert None not in first.values()
    assert command_exit("rotate", "--force") == 0
    second = _stored(server)
    assert all(second[name] != first[name] for name in IDS)
    assert command_exit("drift") == 0
    server.put(WS, "prod", "DB_PASSWORD", "changed", "/backend")
    server.remove(WS, "dev", "api")
    assert command_exit("drift") == 2
    assert command_exit("sync", "--repair") == 0
    assert _stored(server) == second
    assert command_exit("drift") == 0


def test_targets_list_the_kind_with_its_config_keys(authed_api: APIClient, defined: Workspace) -> None:
    targets = {t["type"]: t for t in authed_api.get("/targets").json()["targets"]}
    assert {o["name"]: o["default"] for o in targets["infisical/infisical"]["config"]} == {
        "workspace_id": None, "environment": "dev", "secret_path": "/", "secret_name": None}


def test_providers_show_the_declared_provider_without_its_credentials(
    authed_api: APIClient, defined: Workspace, server: InfisicalServer
) -> None:
    response = authed_api.get("/providers")
    body = response.json()
    offered = {p["kind"]: p for p in body["providers"]}
    assert offered["infisical"]["targets"] == ["infisical/infisical"]
    assert {o["name"] for o in offered["infisical"]["auth_config"]} == {
        "token", "token_file", "client_id", "client_secret"}
    declared = {p["alias"]: p for p in body["declared"]}
    assert declared["infisical"]["auth_kind"] == "universal_auth"
    assert declared["infisical"]["auth_keys"] == ["client_id", "client_secret"]
    assert server.client_secret.encode() not in response.content


def test_validation_names_the_secret_and_the_target_of_each_config_error(
    authed_api: APIClient, defined: Workspace
) -> None:
    config = {"version": "1.0", "secrets": [
        secret("a", target("infisical", "infisical", workspace_id=WS, secret_path="backend")),
        secret("b", target("infisical", "infisical", workspace_id=WS, secret_name="DB PASSWORD", environment=3)),
    ]}
    body = authed_api.post("/config/validate", {"config": config}, format="json").json()
    assert body["valid"] is False
    assert body["errors"] == [
        "secrets[0] 'a' targets[0] infisical/infisical: config.secret_path must be a folder path starting with / "
        "(e.g. /app/db), without empty, . or .. parts or spaces",
        "secrets[1] 'b' targets[0] infisical/infisical: config.environment must be a string",
        "secrets[1] 'b' targets[0] infisical/infisical: config.secret_name must be a name without spaces or /",
    ]


def test_an_auth_kind_infisical_has_not_is_a_warning_that_its_targets_fail_at_sync(
    authed_api: APIClient, defined: Workspace
) -> None:
    config = {"version": "1.0", "providers": {"inf": {"kind": "infisical", "auth": {"kind": "approle"}}},
              "secrets": [secret("a", target("inf", "infisical", workspace_id=WS), rotation_period="30d")]}
    body = authed_api.post("/config/validate", {"config": config}, format="json").json()
    assert body["valid"] is True
    assert body["warnings"] == [
        "secrets[0] 'a' targets[0] inf/infisical: provider 'inf': auth kind 'approle' is not supported for "
        "Infisical (supported: token, service_token, universal_auth, env, ambient): the targets using it fail at sync"]


def test_secretzero_s_infisical_example_validates_without_an_infisical_warning() -> None:
    """The shape of SecretZero's own Infisical example: no providers block, the project and the
    environment from variables, the token from INFISICAL_TOKEN."""
    target_config = {"workspace_id": "${infisical_workspace_id}", "environment": "${infisical_environment}"}
    document = {
        "version": "1.0",
        "variables": {"infisical_workspace_id": "your-workspace-id-here", "infisical_environment": "dev"},
        "secrets": [
            {"name": "database_password", "kind": "random_password", "config": {"length": 32},
             "rotation_period": "90d", "targets": [
                 {"provider": "infisical", "kind": "infisical", "config": target_config},
                 {"provider": "local", "kind": "file", "config": {"path": ".env.local", "format": "dotenv"}}]},
            {"name": "jwt_secret", "kind": "random_string", "config": {"length": 64}, "rotation_period": "90d",
             "targets": [{"provider": "infisical", "kind": "infisical", "config": target_config}]},
        ],
        "templates": {}, "providers": {},
    }
    report = validate_document(yaml.safe_load(yaml.safe_dump(document)))
    assert (report.errors, report.warnings) == ([], [])


def test_a_throttled_store_is_retried_and_no_credential_reaches_answers_audit_lockfile_or_logs(
    authed_api: APIClient, defined: Workspace, server: InfisicalServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.throttle(429, 2, retry_after="0")
    answers = [authed_api.post("/sync", {}, format="json")]
    body = answers[0].json()
    assert body["errors"] == [] and sorted(body["secrets_generated"]) == ["api", "db"]
    answers.append(authed_api.post("/drift/check", {}, format="json"))
    answers.append(authed_api.get("/providers"))
    details = json.dumps(list(AuditEntry.objects.values_list("details", flat=True)))
    texts = [defined.lockfile_path.read_text(), details, caplog.text, *(a.content.decode() for a in answers)]
    for text in texts:
        assert not any(credential in text for credential in _credentials(server))
        assert not any(value and value in text for value in _stored(server).values())


def test_a_refused_login_names_no_credential_in_the_answer_or_the_audit(
    authed_api: APIClient, tmp_path: Path, settings: Any, server: InfisicalServer
) -> None:
    providers = _providers(server)
    providers["infisical"]["auth"]["config"]["client_secret"] = "wrong-client-s3cret"
    ws = workspace(tmp_path, providers, secret("a", target("infisical", "infisical")))
    settings.SERVICE_CONFIG = ws.definition_path
    settings.SERVICE_LOCKFILE = None
    response = authed_api.post("/sync", {}, format="json")
    [error] = response.json()["errors"]
    assert error["message"] == ("infisical/infisical/ws-app/dev: not authenticated (401: the token is missing, "
                                "invalid or expired)")
    details = json.dumps(list(AuditEntry.objects.values_list("details", flat=True)))
    assert b"s3cret" not in response.content and "s3cret" not in details


def test_one_sync_writes_infisical_with_the_other_kinds_and_records_every_target(
    tmp_path: Path, server: InfisicalServer, aws: str, vault: VaultServer, kube: KubernetesServer
) -> None:
    providers = {**_providers(server), "aws": aws_provider(aws), "vault": vault_provider(vault.url),
                 "cluster": kube_provider(kube.url)}
    ws = workspace(tmp_path, providers, secret(
        "shared", target("local", "file", path="out/all.env"), target("aws", "ssm_parameter", name="/app/shared"),
        target("vault", "vault_kv", path="app/shared"),
        target("cluster", "kubernetes_secret", secret_name="shared", namespace="apps"),
        target("infisical", "infisical", secret_name="SHARED")))
    result = sync(ws)
    assert result.errors == [] and result.secrets_generated == ["shared"]
    entry = lock_entries(ws)["shared"]
    assert list(entry["targets"]) == [
        "local/file/out/all.env", "aws/ssm_parameter//app/shared", "vault/vault_kv/secret/app/shared",
        "cluster/kubernetes_secret/apps/shared/shared", "infisical/infisical/"]
    assert set(entry["targets"].values()) == {entry["hash"]}
    assert sha256_text(server.value(WS, "dev", "SHARED") or "") == entry["hash"]
    assert not detect_drift(ws).has_drift
