"""Azure Key Vault and Vercel targets through the HTTP API and the management commands: sync, rotate,
drift, repair and dry run against their protocol peers; discovery; and one definition mixing every
remote kind, synced in one call."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import (
    IDS,
    aws_provider,
    azure_provider,
    command_exit,
    kube_provider,
    lock_entries,
    secret,
    stored_values,
    target,
    vault_provider,
    vercel_provider,
    workspace,
)
from tests.peers.azure_keyvault_server import AzureKeyVaultServer
from tests.peers.kubernetes_server import KubernetesServer
from tests.peers.vault_server import VaultServer
from tests.peers.vercel_server import VercelServer

ENVS = ("preview", "production")


def _definition(tmp_path: Path, keyvault: AzureKeyVaultServer, vercel: VercelServer, settings: Any) -> Workspace:
    """Each secret also goes to a dotenv file: the copy a repair takes the recorded value from."""
    env_file = target("local", "file", path="out/app.env")
    ws = workspace(
        tmp_path, {"azure": azure_provider(keyvault), "vercel": vercel_provider(vercel)},
        secret("db", target("azure", "azure_keyvault", secret_name="db-password", content_type="text/plain"),
               env_file),
        secret("api", target("vercel", "vercel_env", secret_name="API_KEY", environments=list(ENVS)), env_file),
    )
    settings.SERVICE_CONFIG = ws.definition_path
    settings.SERVICE_LOCKFILE = None
    return ws


def _stored(keyvault: AzureKeyVaultServer, vercel: VercelServer) -> dict[str, str | None]:
    return {"db": keyvault.value("db-password"), "api": vercel.value("API_KEY", ENVS)}


# SecretZero's ids: `secret_name` is not among the keys it takes one from.
TARGET_IDS = {"db": "azure/azure_keyvault/", "api": "vercel/vercel_env/"}


def test_the_api_syncs_rotates_and_reports_drift_in_key_vault_and_vercel(
    authed_api: APIClient, tmp_path: Path, settings: Any, keyvault: AzureKeyVaultServer, vercel: VercelServer
) -> None:
    ws = _definition(tmp_path, keyvault, vercel, settings)
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["errors"] == [] and sorted(body["secrets_generated"]) == ["api", "db"]
    first, lock = _stored(keyvault, vercel), lock_entries(ws)
    for name, tid in TARGET_IDS.items():
        assert lock[name]["targets"][tid] == sha256_text(first[name] or "")

    rotated = authed_api.post("/rotation/execute", {"force": True}, format="json").json()
    assert sorted(rotated["rotated"]) == ["api", "db"] and rotated["errors"] == []
    assert all(_stored(keyvault, vercel)[name] != first[name] for name in first)
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False

    keyvault.put("db-password", "changed behind our back")
    vercel.remove("API_KEY", ENVS)
    drift = authed_api.post("/drift/check", {}, format="json").json()
    assert {(d["secret"], d["details"]["target"], d["details"]["reason"]) for d in drift["details"]} == {
        ("db", TARGET_IDS["db"], "value_changed"), ("api", TARGET_IDS["api"], "target_missing")}


def test_an_api_repair_puts_the_recorded_values_back_in_both_stores(
    authed_api: APIClient, tmp_path: Path, settings: Any, keyvault: AzureKeyVaultServer, vercel: VercelServer
) -> None:
    _definition(tmp_path, keyvault, vercel, settings)
    authed_api.post("/sync", {}, format="json")
    recorded = _stored(keyvault, vercel)
    keyvault.delete("db-password")
    vercel.set_value("API_KEY", "changed behind our back", ENVS)

    body = authed_api.post("/sync", {"repair": True}, format="json").json()

    assert sorted(body["secrets_repaired"]) == ["api", "db"] and body["errors"] == []
    assert _stored(keyvault, vercel) == recorded
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False


def test_an_api_dry_run_touches_neither_store(
    authed_api: APIClient, tmp_path: Path, settings: Any, keyvault: AzureKeyVaultServer, vercel: VercelServer
) -> None:
    ws = _definition(tmp_path, keyvault, vercel, settings)
    body = authed_api.post("/sync", {"dry_run": True}, format="json").json()
    assert sorted(body["secrets_generated"]) == ["api", "db"]
    assert keyvault.requests == [] and vercel.requests == [] and not ws.lockfile_path.exists()


def test_the_commands_sync_rotate_detect_drift_repair_and_dry_run_in_both_stores(
    db: None, tmp_path: Path, settings: Any, keyvault: AzureKeyVaultServer, vercel: VercelServer
) -> None:
    _definition(tmp_path, keyvault, vercel, settings)
    assert command_exit("sync", "--dry-run") == 0
    assert keyvault.requests == [] and vercel.requests == []
    assert command_exit("sync") == 0
    first = _stored(keyvault, vercel)
    assert None not in first.values()
    assert command_exit("rotate", "--force") == 0
    second = _stored(keyvault, vercel)
    assert all(second[name] != first[name] for name in first)
    assert command_exit("drift") == 0
    keyvault.put("db-password", "changed")
    vercel.set_value("API_KEY", "changed", ENVS)
    assert command_exit("drift") == 2
    assert command_exit("sync", "--repair") == 0
    assert _stored(keyvault, vercel) == second
    assert command_exit("drift") == 0


def test_targets_list_both_kinds_with_their_config_keys(authed_api: APIClient, tmp_path: Path, settings: Any) -> None:
    targets = {t["type"]: t for t in authed_api.get("/targets").json()["targets"]}
    assert {o["name"] for o in targets["azure/azure_keyvault"]["config"]} == {
        "vault_url", "vault_name", "secret_name", "content_type", "tags"}
    assert {o["name"]: o["default"] for o in targets["vercel/vercel_env"]["config"]} == {
        "project_id": None, "secret_name": None, "environments": ["production"]}


def test_declared_azure_and_vercel_providers_are_shown_without_credentials(
    authed_api: APIClient, tmp_path: Path, settings: Any
) -> None:
    providers = {
        "azure": {"kind": "azure", "auth": {"kind": "service_principal", "config": {
            "tenant_id": "t", "client_id": "c", "client_secret": "az-s3cr3t"}},
            "config": {"vault_url": "https://v.vault.azure.net", "client_secret": "inline-s3cr3t"}},
        "vercel": {"kind": "vercel", "auth": {"kind": "token", "config": {"token": "vc-s3cr3t", "team_id": "team"}},
                   "config": {"project_id": "prj", "token": "inline-s3cr3t"}},
    }
    ws = workspace(tmp_path, providers, secret("a", target("local", "file", path="a.env")))
    settings.SERVICE_CONFIG = ws.definition_path
    response = authed_api.get("/providers")
    body = response.json()
    declared = {d["alias"]: d for d in body["declared"]}
    assert declared["azure"]["auth_keys"] == ["client_id", "client_secret", "tenant_id"]
    assert declared["azure"]["targets"] == ["azure/azure_keyvault"]
    assert declared["vercel"]["config"]["project_id"] == "prj"
    assert declared["vercel"]["targets"] == ["vercel/vercel_env"]
    assert {p["kind"] for p in body["providers"]} >= {"azure", "vercel"}
    assert b"s3cr3t" not in response.content


@pytest.fixture
def everything(tmp_path: Path, settings: Any, aws: str, vault: VaultServer, kube: KubernetesServer,
               keyvault: AzureKeyVaultServer, vercel: VercelServer) -> Workspace:
    providers = {"aws": aws_provider(aws), "vault": vault_provider(vault.url), "cluster": kube_provider(kube.url),
                 "azure": azure_provider(keyvault), "vercel": vercel_provider(vercel)}
    ws = workspace(
        tmp_path, providers,
        secret("db_password", target("local", "file", path="out/app.env"),
               target("aws", "ssm_parameter", name="/app/db_password")),
        secret("api_key", target("aws", "secrets_manager", name="app/api_key")),
        secret("vault_token", target("vault", "vault_kv", path="app/config", key="token")),
        secret("k8s_password", target("cluster", "kubernetes_secret", secret_name="app-secrets", namespace="apps",
                                      data_key="DB_PASSWORD")),
        secret("kv_secret", target("azure", "azure_keyvault", secret_name="kv-secret")),
        secret("vercel_key", target("vercel", "vercel_env", secret_name="VERCEL_KEY")),
    )
    settings.SERVICE_CONFIG = ws.definition_path
    settings.SERVICE_LOCKFILE = None
    return ws


def test_a_definition_mixing_every_remote_kind_syncs_in_one_call_recording_every_target(
    authed_api: APIClient, everything: Workspace, aws: str, vault: VaultServer, kube: KubernetesServer,
    keyvault: AzureKeyVaultServer, vercel: VercelServer
) -> None:
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["errors"] == [] and len(body["secrets_generated"]) == 6
    stored = {**stored_values(aws, vault, kube), "kv_secret": keyvault.value("kv-secret"),
              "vercel_key": vercel.value("VERCEL_KEY")}
    ids = {**IDS, "kv_secret": "azure/azure_keyvault/", "vercel_key": "vercel/vercel_env/"}
    lock = lock_entries(everything)
    for name, tid in ids.items():
        assert lock[name]["targets"][tid] == sha256_text(stored[name] or ""), name
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False


def test_no_value_or_credential_reaches_the_logs_the_audit_or_the_lockfile(
    authed_api: APIClient, tmp_path: Path, settings: Any, keyvault: AzureKeyVaultServer, vercel: VercelServer,
    caplog: pytest.LogCaptureFixture
) -> None:
    ws = _definition(tmp_path, keyvault, vercel, settings)
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="azure")  # the SDK's request logging, quiet in the service log
    authed_api.post("/sync", {}, format="json")
    authed_api.post("/rotation/execute", {"force": True}, format="json")
    authed_api.post("/drift/check", {}, format="json")
    values = [version["value"] for version in keyvault.secrets["db-password"]]
    values += [vercel.value("API_KEY", ENVS) or ""]
    assert len(values) == 3 and all(values)
    assert any(record.name.startswith("azure.") for record in caplog.records)  # it did log requests
    places = {"logs": caplog.text, "lockfile": ws.lockfile_path.read_text(),
              "audit": json.dumps([row.details for row in AuditEntry.objects.all()])}
    for where, text in places.items():
        for value in [*values, keyvault.client_secret, vercel.token]:
            assert value not in text, where
