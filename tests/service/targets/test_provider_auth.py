"""Provider auth SecretZero has: AWS assume_role (STS AssumeRole, against moto's server) and Vault
AppRole (auth/approle/login, against the Vault peer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.drift import detect_drift
from secretsapi.service.sync import sync
from secretsapi.service.targets import TargetContext
from secretsapi.service.targets.aws import aws_client
from secretsapi.service.workspace import Workspace
from tests.factories import AWS_REGION, boto, definition, secret, target, write_definition
from tests.peers.vault_server import VaultServer

ROLE_ARN = "arn:aws:iam::123456789012:role/SecretAdmin"


def _ws(folder: Path, providers: dict[str, Any], *secrets: dict[str, Any]) -> Workspace:
    doc = definition(*secrets, providers=providers)
    return Workspace(definition_path=write_definition(folder, doc), lock_timeout=10, environ={})


def _assume_role_provider(endpoint: str, **auth: Any) -> dict[str, Any]:
    return {"kind": "aws",
            "auth": {"kind": "assume_role", "config": {"access_key_id": "testing",
                                                       "secret_access_key": "testing",
                                                       "role_arn": ROLE_ARN, **auth}},
            "config": {"region": AWS_REGION, "endpoint_url": endpoint}}


def test_assume_role_writes_with_the_roles_temporary_credentials(tmp_path: Path, aws: str) -> None:
    ws = _ws(tmp_path, {"aws": _assume_role_provider(aws)},
             secret("db_password", target("aws", "ssm_parameter", name="/app/db_password")))
    assert sync(ws).errors == []
    stored = boto("ssm", aws).get_parameter(Name="/app/db_password", WithDecryption=True)["Parameter"]
    assert stored["Value"]
    assert detect_drift(ws).has_drift is False
    spec = ws.definition()
    ctx = TargetContext.of(spec)
    target_spec = spec.secrets[0].targets[0]
    identity = aws_client("sts", target_spec, ctx, "aws/ssm_parameter").get_caller_identity()
    assert identity["Arn"] == "arn:aws:sts::123456789012:assumed-role/SecretAdmin/secretzero-session"


def test_assume_role_uses_the_session_name_given(tmp_path: Path, aws: str) -> None:
    ws = _ws(tmp_path, {"aws": _assume_role_provider(aws, session_name="deploy-bot")},
             secret("db_password", target("aws", "ssm_parameter", name="/app/db_password")))
    spec = ws.definition()
    client = aws_client("sts", spec.secrets[0].targets[0], TargetContext.of(spec), "aws/ssm_parameter")
    assert client.get_caller_identity()["Arn"].endswith(":assumed-role/SecretAdmin/deploy-bot")


def test_assume_role_without_a_role_arn_fails_the_target_naming_the_setting(tmp_path: Path, aws: str) -> None:
    provider = _assume_role_provider(aws)
    del provider["auth"]["config"]["role_arn"]
    ws = _ws(tmp_path, {"aws": provider},
             secret("db_password", target("aws", "ssm_parameter", name="/app/db_password")))
    assert [e.message for e in sync(ws).errors] == [
        "provider 'aws': auth kind assume_role needs role_arn"]


def _approle_provider(url: str, role_id: str = "app-role", secret_id: str = "s3cret-id") -> dict[str, Any]:
    return {"kind": "vault", "auth": {"kind": "approle", "config": {"role_id": role_id, "secret_id": secret_id}},
            "config": {"address": url}}


@pytest.mark.server
def test_approle_logs_in_once_and_writes_with_the_token_vault_issued(tmp_path: Path, clean_sdk_env: None) -> None:
    with VaultServer(token="unused-root", approle=("app-role", "s3cret-id")) as vault:
        ws = _ws(tmp_path, {"vault": _approle_provider(vault.url)},
                 secret("db_password", target("vault", "vault_kv", path="app/db", key="password")),
                 secret("api_key", target("vault", "vault_kv", path="app/api", key="key")))
        assert sync(ws).errors == []
        assert sorted(vault.data("secret", "app/db") or {}) == ["password"]
        assert sorted(vault.data("secret", "app/api") or {}) == ["key"]
        assert detect_drift(ws).has_drift is False
        assert len(vault.issued) == 1  # one login served every call, the drift check's too


@pytest.mark.server
def test_a_rejected_approle_login_fails_the_targets_without_the_secret_id(
        tmp_path: Path, clean_sdk_env: None) -> None:
    with VaultServer(approle=("app-role", "s3cret-id")) as vault:
        ws = _ws(tmp_path, {"vault": _approle_provider(vault.url, secret_id="wrong-secret-id")},
                 secret("db_password", target("vault", "vault_kv", path="app/db")))
        messages = [e.message for e in sync(ws).errors]
        assert messages == ["provider 'vault': AppRole login rejected (400)"]
        assert vault.data("secret", "app/db") is None and vault.issued == []


@pytest.mark.server
def test_approle_without_a_secret_id_names_both_settings(tmp_path: Path, clean_sdk_env: None) -> None:
    with VaultServer(approle=("app-role", "s3cret-id")) as vault:
        provider = _approle_provider(vault.url)
        del provider["auth"]["config"]["secret_id"]
        ws = _ws(tmp_path, {"vault": provider}, secret("db_password", target("vault", "vault_kv", path="app/db")))
        assert [e.message for e in sync(ws).errors] == [
            "provider 'vault': auth kind approle needs role_id and secret_id"]
