"""Remote targets end to end through the engine: sync, rotation, drift and dry run against
moto's AWS server and the Vault and Kubernetes test servers, with the real client libraries."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import (
    IDS,
    aws_provider,
    boto,
    every_kind_workspace,
    kube_provider,
    lock_entries,
    secret,
    stored_values,
    target,
    vault_provider,
    workspace,
)
from tests.peers.kubernetes_server import KubernetesServer
from tests.peers.vault_server import VaultServer


def test_sync_writes_every_remote_kind_and_records_its_target_ids(
    tmp_path: Path, aws: str, vault: VaultServer, kube: KubernetesServer
) -> None:
    ws = every_kind_workspace(tmp_path, aws, vault, kube)
    result = sync(ws)
    assert result.errors == []
    assert sorted(result.secrets_generated) == sorted(IDS)
    lock, stored = lock_entries(ws), stored_values(aws, vault, kube)
    for name, target_id in IDS.items():
        assert lock[name]["hash"] == sha256_text(stored[name])
        assert lock[name]["targets"][target_id] == sha256_text(stored[name]), name
    assert lock["db_password"]["targets"]["local/file/out/app.env"] == lock["db_password"]["hash"]
    assert (kube.secret("apps", "app-secrets") or {})["metadata"]["labels"] == {"team": "core"}
    parameter = boto("ssm", aws).get_parameter(Name="/app/db_password")["Parameter"]
    assert parameter["Type"] == "SecureString"
    assert not detect_drift(ws).has_drift
    assert all(value not in ws.lockfile_path.read_text() for value in stored.values())


def test_forced_rotation_writes_a_new_version_in_every_store(
    tmp_path: Path, aws: str, vault: VaultServer, kube: KubernetesServer
) -> None:
    ws = every_kind_workspace(tmp_path, aws, vault, kube)
    assert sync(ws).errors == []
    before = stored_values(aws, vault, kube)
    sm_version = boto("secretsmanager", aws).get_secret_value(SecretId="app/api_key")["VersionId"]
    # Versions counted from the sync's: on a loaded host an SDK may send a write again after its
    # read timed out, adding a version with the same value (seen with botocore's retries).
    ssm_version = boto("ssm", aws).get_parameter(Name="/app/db_password")["Parameter"]["Version"]
    vault_version = vault.version("secret", "app/config")

    result = execute_rotation(ws, force=True)

    assert result.errors == [] and sorted(result.rotated) == sorted(IDS)
    after = stored_values(aws, vault, kube)
    assert all(after[name] != before[name] for name in IDS)
    assert boto("ssm", aws).get_parameter(Name="/app/db_password")["Parameter"]["Version"] > ssm_version
    assert boto("secretsmanager", aws).get_secret_value(SecretId="app/api_key")["VersionId"] != sm_version
    assert vault.version("secret", "app/config") > vault_version
    lock = lock_entries(ws)
    for name, target_id in IDS.items():
        assert lock[name]["rotation_count"] == 1
        assert lock[name]["targets"][target_id] == sha256_text(after[name])
    assert not detect_drift(ws).has_drift


def _findings(ws: Workspace) -> dict[str, tuple[str, str]]:
    return {item.details["target"]: (item.secret, item.details["reason"]) for item in detect_drift(ws).details}


def test_drift_reports_values_changed_behind_our_back(
    tmp_path: Path, aws: str, vault: VaultServer, kube: KubernetesServer
) -> None:
    ws = every_kind_workspace(tmp_path, aws, vault, kube)
    assert sync(ws).errors == []
    boto("ssm", aws).put_parameter(Name="/app/db_password", Value="changed", Type="SecureString", Overwrite=True)
    boto("secretsmanager", aws).put_secret_value(SecretId="app/api_key", SecretString="changed")
    vault.put("secret", "app/config", {"token": "changed"})
    kube.put_key("apps", "app-secrets", "DB_PASSWORD", "changed")

    findings = _findings(ws)

    assert findings == {target_id: (name, "value_changed") for name, target_id in IDS.items()}
    item = next(i for i in detect_drift(ws).details if i.secret == "vault_token")
    assert item.details["actual_hash"] == sha256_text("changed")
    assert item.details["path"] == "secret/app/config#token"


def test_drift_reports_values_deleted_behind_our_back_as_target_missing(
    tmp_path: Path, aws: str, vault: VaultServer, kube: KubernetesServer
) -> None:
    ws = every_kind_workspace(tmp_path, aws, vault, kube)
    assert sync(ws).errors == []
    deleted = vault.version("secret", "app/config")
    boto("ssm", aws).delete_parameter(Name="/app/db_password")
    boto("secretsmanager", aws).delete_secret(SecretId="app/api_key", ForceDeleteWithoutRecovery=True)
    vault.delete("secret", "app/config")  # KV v2 soft delete of the latest version
    kube.delete_key("apps", "app-secrets", "DB_PASSWORD")

    assert _findings(ws) == {target_id: (name, "target_missing") for name, target_id in IDS.items()}

    # A forced sync puts everything back (a new version over the deleted one on KV v2).
    assert sync(ws, force=True).errors == []
    assert not detect_drift(ws).has_drift
    assert vault.version("secret", "app/config") > deleted


def test_a_secret_scheduled_for_deletion_is_missing_and_restored_by_the_next_write(
    tmp_path: Path, aws: str, vault: VaultServer, kube: KubernetesServer
) -> None:
    ws = workspace(tmp_path, {"aws": aws_provider(aws)},
                   secret("api_key", target("aws", "secrets_manager", name="app/api_key")))
    assert sync(ws).errors == []
    boto("secretsmanager", aws).delete_secret(SecretId="app/api_key", RecoveryWindowInDays=7)
    assert _findings(ws) == {IDS["api_key"]: ("api_key", "target_missing")}
    assert sync(ws, force=True).errors == []
    assert not detect_drift(ws).has_drift


def test_dry_run_touches_no_remote_store(
    tmp_path: Path, aws: str, vault: VaultServer, kube: KubernetesServer
) -> None:
    ws = every_kind_workspace(tmp_path, aws, vault, kube)
    result = sync(ws, dry_run=True)
    assert result.dry_run and sorted(result.secrets_generated) == sorted(IDS)
    assert vault.requests == [] and kube.requests == []
    assert boto("ssm", aws).describe_parameters()["Parameters"] == []
    assert boto("secretsmanager", aws).list_secrets()["SecretList"] == []
    assert not ws.lockfile_path.exists() and not (tmp_path / "out").exists()


def test_two_secrets_in_one_kubernetes_secret_keep_their_own_data_keys(
    tmp_path: Path, kube: KubernetesServer
) -> None:
    shared = {"secret_name": "app", "namespace": "default"}
    ws = workspace(
        tmp_path, {"kubernetes": kube_provider(kube.url)},
        secret("db_user", target("kubernetes", "kubernetes_secret", **shared, data_key="DB_USER")),
        secret("db_pass", target("kubernetes", "kubernetes_secret", **shared, data_key="DB_PASS")),
        secret("plain", target("kubernetes", "kubernetes_secret", **shared)),  # data key: its name
    )
    assert sync(ws).errors == []
    assert [method for method, _ in kube.requests] == ["PATCH", "POST"]  # one Secret, one write
    kube.put_key("default", "app", "FOREIGN", "kept")  # someone else's key in the same Secret
    before = kube.data("default", "app")
    assert before is not None and set(before) == {"DB_USER", "DB_PASS", "plain", "FOREIGN"}
    lock = lock_entries(ws)
    assert "kubernetes/kubernetes_secret/default/app/DB_USER" in lock["db_user"]["targets"]
    assert "kubernetes/kubernetes_secret/default/app/DB_PASS" in lock["db_pass"]["targets"]
    assert set(lock["plain"]["targets"]) == {"kubernetes/kubernetes_secret/default/app/plain"}
    assert lock["db_user"]["hash"] == sha256_text(before["DB_USER"])
    assert lock["plain"]["hash"] == sha256_text(before["plain"])

    assert execute_rotation(ws, secret_name="db_pass", force=True).rotated == ["db_pass"]

    after = kube.data("default", "app")
    assert after is not None and after["DB_PASS"] != before["DB_PASS"]
    assert {k: after[k] for k in ("DB_USER", "plain", "FOREIGN")} == {
        k: before[k] for k in ("DB_USER", "plain", "FOREIGN")}
    assert not detect_drift(ws).has_drift


def test_two_secrets_in_one_vault_path_keep_their_own_keys(tmp_path: Path, vault: VaultServer) -> None:
    vault.put("secret", "app/db", {"foreign": "kept"})
    ws = workspace(
        tmp_path, {"vault": vault_provider(vault.url)},
        secret("username", target("vault", "vault_kv", path="app/db", key="username")),
        secret("password", target("vault", "vault_kv", path="app/db", key="password")),
        secret("other", target("vault", "vault_kv", path="app/db")),  # the default key: value
    )
    assert sync(ws).errors == []
    assert vault.version("secret", "app/db") == 2  # the foreign write, then one for all three
    before = vault.data("secret", "app/db")
    assert before is not None and set(before) == {"username", "password", "value", "foreign"}
    lock = lock_entries(ws)
    assert set(lock["username"]["targets"]) == {"vault/vault_kv/secret/app/db#username"}
    assert set(lock["password"]["targets"]) == {"vault/vault_kv/secret/app/db#password"}
    assert set(lock["other"]["targets"]) == {"vault/vault_kv/secret/app/db"}

    execute_rotation(ws, secret_name="password", force=True)

    after = vault.data("secret", "app/db")
    assert after is not None and after["password"] != before["password"]
    assert {k: after[k] for k in ("username", "value", "foreign")} == {
        k: before[k] for k in ("username", "value", "foreign")}
    assert vault.version("secret", "app/db") == 3
    assert not detect_drift(ws).has_drift


def test_kv_version_1_mounts_are_written_read_and_checked(tmp_path: Path, vault: VaultServer) -> None:
    ws = workspace(tmp_path, {"vault": vault_provider(vault.url)},
                   secret("legacy", target("vault", "vault_kv", path="old/app", mount_point="kv1", version=1)))
    assert sync(ws).errors == []
    stored = vault.data("kv1", "old/app")
    assert stored is not None and lock_entries(ws)["legacy"]["targets"]["vault/vault_kv/kv1/old/app"] == sha256_text(
        stored["value"])
    vault.delete("kv1", "old/app")
    assert _findings(ws) == {"vault/vault_kv/kv1/old/app": ("legacy", "target_missing")}


def test_kubernetes_provider_can_come_from_a_kubeconfig_context(tmp_path: Path, kube: KubernetesServer) -> None:
    kubeconfig = {
        "apiVersion": "v1", "kind": "Config", "current-context": "elsewhere",
        "clusters": [{"name": "test", "cluster": {"server": kube.url}},
                     {"name": "nowhere", "cluster": {"server": "http://127.0.0.1:9"}}],
        "users": [{"name": "tester", "user": {"token": kube.token}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "tester"}},
                     {"name": "elsewhere", "context": {"cluster": "nowhere", "user": "tester"}}],
    }
    (tmp_path / "kube.yaml").write_text(json.dumps(kubeconfig))
    providers = {"k8s": {"kind": "kubernetes", "config": {"kubeconfig": "kube.yaml", "context": "test"}}}
    ws = workspace(tmp_path, providers, secret("token", target("k8s", "kubernetes_secret", secret_name="app")))
    assert sync(ws).errors == []
    stored = kube.secret("default", "app")
    assert stored is not None and stored["type"] == "Opaque"
    value = base64.b64decode(stored["data"]["token"]).decode()
    assert lock_entries(ws)["token"]["targets"]["k8s/kubernetes_secret/default/app/token"] == sha256_text(value)


def test_undeclared_providers_use_the_sdks_environment(
    tmp_path: Path, aws: str, vault: VaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {"AWS_ENDPOINT_URL": aws, "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "testing",
                        "AWS_SECRET_ACCESS_KEY": "testing", "VAULT_ADDR": vault.url,
                        "VAULT_TOKEN": vault.token}.items():
        monkeypatch.setenv(name, value)
    ws = workspace(tmp_path, {},
                   secret("a", target("aws", "ssm_parameter", name="env-param", type="String")),
                   secret("b", target("vault", "vault_kv", path="env/path")))
    assert sync(ws).errors == []
    assert boto("ssm", aws).get_parameter(Name="env-param")["Parameter"]["Type"] == "String"
    assert (vault.data("secret", "env/path") or {}).get("value")


def test_a_templates_shared_vault_target_stores_each_field_under_its_name(
    tmp_path: Path, vault: VaultServer
) -> None:
    path = tmp_path / "Secretfile.yml"
    template = {"fields": {"username": {"generator": {"kind": "uuid"}},
                           "password": {"generator": {"kind": "random_hex"}}},
                "targets": [target("vault", "vault_kv", path="app/creds")]}
    document = {"version": "1.0", "providers": {"vault": vault_provider(vault.url)},
                "templates": {"creds": template}, "secrets": [{"name": "db", "kind": "templates.creds"}]}
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    ws = Workspace(definition_path=path, lock_timeout=10)
    assert sync(ws).errors == []
    stored = vault.data("secret", "app/creds")
    assert stored is not None and set(stored) == {"username", "password"}
    lock = lock_entries(ws)
    assert set(lock["db.password"]["targets"]) == {"vault/vault_kv/secret/app/creds#password"}
    assert lock["db.password"]["hash"] == sha256_text(stored["password"])
    assert not detect_drift(ws).has_drift
