"""One definition over the encrypted-file kinds, an ExternalSecret manifest, azure_app_reg, AWS
through assume_role and Vault through AppRole, beside a dotenv file: through the HTTP API and the
management commands, checked with the real ansible-vault and git-crypt."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from secretsapi.service.util.hashing import sha256_text
from tests.factories import AWS_REGION, boto, git, git_crypt_repository
from tests.peers.vault_server import VaultServer

ANSIBLE_VAULT = str(Path(sys.executable).with_name("ansible-vault"))
VAULT_PASSWORD = "vault-pa55word-never-shown"
SECRET_ID = "approle-s3cret-id-never-shown"
MANIFEST = "manifests/db.yaml"


def _view(root: Path) -> dict[str, Any]:
    done = subprocess.run([ANSIBLE_VAULT, "view", "--vault-password-file", "vault-pass.txt",
                           "secrets/vault.yml"], cwd=root, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return dict(yaml.safe_load(done.stdout))


def _target(provider: str, kind: str, **config: Any) -> dict[str, Any]:
    return {"provider": provider, "kind": kind, "config": config}


def _definition(aws: str | None, vault: VaultServer | None) -> dict[str, Any]:
    dotenv = _target("local", "file", path=".env.dev", format="dotenv")
    providers: dict[str, Any] = {
        "repo_ansible": {"kind": "ansible_vault",
                         "auth": {"kind": "ambient", "config": {"vault_password_file": "vault-pass.txt"}},
                         "config": {"vault_file": "secrets/vault.yml", "format": "yaml"}},
        "repo_gitcrypt": {"kind": "git_crypt", "auth": {"kind": "ambient"},
                          "config": {"secret_file": "secrets/gitcrypt.yaml", "format": "yaml"}},
        "kubernetes": {"kind": "kubernetes"},
    }
    db_targets = [dotenv, _target("repo_ansible", "ansible_vault_file", key="APP_DB_PASSWORD"),
                  _target("repo_gitcrypt", "git_crypt_file", key="APP_DB_PASSWORD"),
                  _target("kubernetes", "external_secret", secret_name="db", output_path=MANIFEST,
                          backend_key="prod/db")]
    if aws is not None:
        providers["aws"] = {"kind": "aws", "auth": {"kind": "assume_role", "config": {
            "access_key_id": "testing", "secret_access_key": "testing",
            "role_arn": "arn:aws:iam::123456789012:role/SecretAdmin"}},
            "config": {"region": AWS_REGION, "endpoint_url": aws}}
        db_targets.append(_target("aws", "ssm_parameter", name="/app/db"))
    if vault is not None:
        providers["vault"] = {"kind": "vault", "auth": {"kind": "approle", "config": {
            "role_id": "app-role", "secret_id": SECRET_ID}}, "config": {"address": vault.url}}
        db_targets.append(_target("vault", "vault_kv", path="app/db", key="password"))
    secrets = [
        {"name": "db_password", "kind": "random_password", "rotation_period": "90d", "config": {"length": 24},
         "targets": db_targets},
        {"name": "app_client_secret", "kind": "azure_app_reg", "rotation_period": "365d",
         "config": {"value": "entra-client-secret"},
         "targets": [dotenv, _target("repo_ansible", "ansible_vault_file")]},
    ]
    return {"version": "1.0", "providers": providers, "secrets": secrets}


@pytest.fixture
def repo(tmp_path: Path, settings: Any) -> Path:
    """The definition's folder is an unlocked git-crypt repository encrypting secrets/gitcrypt.yaml."""
    git_crypt_repository(tmp_path, "secrets/gitcrypt.yaml")
    (tmp_path / "vault-pass.txt").write_text(VAULT_PASSWORD)
    settings.SERVICE_CONFIG = tmp_path / "Secretfile.yml"
    settings.SERVICE_LOCKFILE = None
    return tmp_path


def _write(root: Path, aws: str | None = None, vault: VaultServer | None = None) -> None:
    (root / "Secretfile.yml").write_text(yaml.safe_dump(_definition(aws, vault), sort_keys=False))


def _tamper(root: Path) -> None:
    """Change the value in the vault (re-encrypted by ansible-vault) and in the git-crypt file."""
    plain = root / "plain.yml"
    plain.write_text("APP_DB_PASSWORD: changed\napp_client_secret: entra-client-secret\n")
    subprocess.run([ANSIBLE_VAULT, "encrypt", "--vault-password-file", "vault-pass.txt", "--output",
                    "secrets/vault.yml", "plain.yml"], cwd=root, capture_output=True, timeout=60, check=True)
    plain.unlink()
    (root / "secrets/gitcrypt.yaml").write_text("APP_DB_PASSWORD: changed\n")


def test_api_syncs_checks_repairs_and_dry_runs_every_new_kind_in_one_definition(
        authed_api: APIClient, repo: Path, aws: str) -> None:
    with VaultServer(token="unused-root", approle=("app-role", SECRET_ID)) as vault:
        _write(repo, aws, vault)
        response = authed_api.post("/sync", {}, format="json")
        body = response.json()
        assert (body["errors"], body["secrets_generated"]) == ([], ["db_password", "app_client_secret"])
        shown = _view(repo)
        value = shown["APP_DB_PASSWORD"]
        assert shown["app_client_secret"] == "entra-client-secret"
        assert yaml.safe_load((repo / "secrets/gitcrypt.yaml").read_text()) == {"APP_DB_PASSWORD": value}
        assert boto("ssm", aws).get_parameter(Name="/app/db", WithDecryption=True)["Parameter"]["Value"] == value
        assert (vault.data("secret", "app/db") or {})["password"] == value
        assert "key: prod/db" in (repo / MANIFEST).read_text()
        lock = json.loads((repo / ".gitsecrets.lock").read_text())["secrets"]
        assert set(lock["db_password"]["targets"]) == {
            "local/file/.env.dev", "repo_ansible/ansible_vault_file/", "repo_gitcrypt/git_crypt_file/",
            "kubernetes/external_secret/", "aws/ssm_parameter//app/db", "vault/vault_kv/secret/app/db#password"}
        assert lock["db_password"]["targets"]["repo_gitcrypt/git_crypt_file/"] == sha256_text(value)

        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "secrets")
        assert git(repo, "show", "HEAD:secrets/gitcrypt.yaml").startswith(b"\x00GITCRYPT\x00")

        before = {p: (repo / p).read_bytes() for p in ("secrets/vault.yml", "secrets/gitcrypt.yaml", MANIFEST)}
        dry = authed_api.post("/sync", {"dry_run": True, "force": True}, format="json").json()
        assert (dry["secrets_generated"], dry["errors"]) == (["db_password", "app_client_secret"], [])
        assert "would be generated" in dry["message"]
        assert {p: (repo / p).read_bytes() for p in before} == before

        _tamper(repo)
        drift = authed_api.post("/drift/check", {}, format="json").json()
        assert sorted((d["details"]["target"], d["details"]["reason"]) for d in drift["details"]) == [
            ("repo_ansible/ansible_vault_file/", "value_changed"),
            ("repo_gitcrypt/git_crypt_file/", "value_changed")]
        repaired = authed_api.post("/sync", {"repair": True}, format="json").json()
        assert repaired["secrets_repaired"] == ["db_password"] and repaired["errors"] == []
        assert _view(repo)["APP_DB_PASSWORD"] == value
        assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False

        providers = authed_api.get("/providers")
        for answer in (response, providers):
            assert VAULT_PASSWORD.encode() not in answer.content and SECRET_ID.encode() not in answer.content
            assert value.encode() not in answer.content


@pytest.mark.slow
def test_targets_lists_the_new_kinds_with_their_config_keys(authed_api: APIClient, repo: Path) -> None:
    targets = {t["type"]: {o["name"] for o in t["config"]} for t in authed_api.get("/targets").json()["targets"]}
    assert targets["ansible_vault/ansible_vault_file"] == {"key"}
    assert targets["git_crypt/git_crypt_file"] == {"key"}
    assert {"output_path", "secret_name", "secret_store_ref", "backend_key"} <= targets["kubernetes/external_secret"]
    generators = {g["kind"] for g in authed_api.get("/generators").json()["generators"]}
    assert "azure_app_reg" in generators


@pytest.mark.slow
def test_the_definition_validates_without_warnings(authed_api: APIClient, repo: Path) -> None:
    body = authed_api.post("/config/validate", {"config": _definition(None, None)}, format="json").json()
    assert (body["valid"], body["errors"], body["warnings"]) == (True, [], [])


@pytest.mark.slow
def test_an_invalid_external_secret_is_a_validation_error(authed_api: APIClient, repo: Path) -> None:
    document = _definition(None, None)
    del document["secrets"][0]["targets"][3]["config"]["secret_name"]
    body = authed_api.post("/config/validate", {"config": document}, format="json").json()
    assert body["valid"] is False
    assert body["errors"] == ["secrets[0] 'db_password' targets[3] kubernetes/external_secret: "
                              "config.secret_name is required"]


@pytest.mark.server
@pytest.mark.slow
def test_commands_sync_detect_drift_and_repair_the_encrypted_files(repo: Path, db: None) -> None:
    def run(*args: str) -> int:
        try:
            call_command(*args, stdout=StringIO())
        except CommandError as exc:
            return exc.returncode
        return 0

    _write(repo)
    assert run("sync") == 0
    value = _view(repo)["APP_DB_PASSWORD"]
    assert run("drift") == 0
    _tamper(repo)
    assert run("drift") == 2
    assert run("sync", "--repair") == 0
    assert (_view(repo)["APP_DB_PASSWORD"], run("drift")) == (value, 0)
    before = (repo / "secrets/vault.yml").read_bytes()
    assert run("sync", "--force", "--dry-run") == 0
    assert (repo / "secrets/vault.yml").read_bytes() == before
