"""A definition may not choose among the operator's identities or name the server's variables
(issue 36): an AWS ``profile`` of the server's shared files (also as auth kind ``profile``), a role
assumed with the server's AWS credentials, a ``context`` of the server's kubeconfig, and the
variable ``vault_password_env`` reads. Each is refused in the service unless the operator lists it
(SERVICE_AWS_PROFILES, SERVICE_AWS_ROLES, SERVICE_KUBE_CONTEXTS, SERVICE_AZURE_IDENTITIES,
SERVICE_DEFINITION_ENV), with an
error naming the setting and before any request; without a selection the server's default
identity is used, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from rest_framework.test import APIClient

from tests.factories import AWS_REGION, Project, definition, target
from tests.peers.azure_keyvault_server import AzureKeyVaultServer
from tests.peers.kubernetes_server import KubernetesServer
from tests.service.targets.conftest import aws, clean_sdk_env, keyvault, kube, moto_url  # noqa: F401 (fixtures)


def _sync(api: APIClient) -> Any:
    response = api.post("/sync", {}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _messages(result: Any) -> str:
    return " ".join(error["message"] for error in result["errors"])


# --- AWS profiles of the server's shared files ------------------------------------------------------

@pytest.fixture
def server_profiles(aws: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:  # noqa: F811
    """The server's AWS config: a default identity and an admin profile, both reaching moto through
    the operator's own AWS_ENDPOINT_URL."""
    config = tmp_path / "aws-config"
    config.write_text("[default]\naws_access_key_id = default-key\naws_secret_access_key = default-secret\n"
                      "[profile prod-admin]\naws_access_key_id = admin-key\naws_secret_access_key = admin-secret\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_ENDPOINT_URL", aws)
    monkeypatch.setenv("AWS_DEFAULT_REGION", AWS_REGION)
    return aws


def _parameters(endpoint: str) -> list[str]:
    ssm = boto3.client("ssm", endpoint_url=endpoint, region_name=AWS_REGION,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    return [p["Name"] for p in ssm.describe_parameters()["Parameters"]]


def _aws_definition(project: Project, provider: dict[str, Any]) -> None:
    project.write(definition({"name": "db", "kind": "random_string",
                              "targets": [target("aws", "ssm_parameter", name="/app/db")]},
                             providers={"aws": provider}))


PROFILE_SELECTIONS = {
    "profile": {"kind": "aws", "config": {"profile": "prod-admin"}},
    "profile_name": {"kind": "aws", "config": {"profile_name": "prod-admin"}},
    "auth kind profile": {"kind": "aws", "auth": {"kind": "profile", "config": {"profile": "prod-admin"}}},
}


@pytest.mark.parametrize("name", list(PROFILE_SELECTIONS))
def test_selecting_a_server_profile_is_refused_naming_the_setting(
    name: str, authed_api: APIClient, project: Project, server_profiles: str,
) -> None:
    _aws_definition(project, PROFILE_SELECTIONS[name])

    result = _sync(authed_api)

    assert "SERVICE_AWS_PROFILES" in _messages(result) and "prod-admin" in _messages(result)
    assert _parameters(server_profiles) == []


def test_a_profile_the_operator_lists_may_be_selected(
    authed_api: APIClient, project: Project, server_profiles: str, settings: Any,
) -> None:
    settings.SERVICE_AWS_PROFILES = ("prod-admin",)
    _aws_definition(project, PROFILE_SELECTIONS["auth kind profile"])

    assert _sync(authed_api)["errors"] == []
    assert _parameters(server_profiles) == ["/app/db"]


def test_the_servers_default_identity_needs_no_listing(
    authed_api: APIClient, project: Project, server_profiles: str,
) -> None:
    _aws_definition(project, {"kind": "aws"})

    assert _sync(authed_api)["errors"] == []
    assert _parameters(server_profiles) == ["/app/db"]


ROLE = "arn:aws:iam::123456789012:role/prod-admin"


def test_assuming_a_role_with_the_servers_credentials_is_refused_naming_the_setting(
    authed_api: APIClient, project: Project, server_profiles: str,
) -> None:
    _aws_definition(project, {"kind": "aws", "auth": {"kind": "assume_role", "config": {"role_arn": ROLE}}})

    result = _sync(authed_api)

    assert "SERVICE_AWS_ROLES" in _messages(result) and ROLE in _messages(result)
    assert _parameters(server_profiles) == []


def test_a_role_the_operator_lists_may_be_assumed(
    authed_api: APIClient, project: Project, server_profiles: str, settings: Any,
) -> None:
    settings.SERVICE_AWS_ROLES = (ROLE,)
    _aws_definition(project, {"kind": "aws", "auth": {"kind": "assume_role", "config": {"role_arn": ROLE}}})

    assert _sync(authed_api)["errors"] == []
    assert _parameters(server_profiles) == ["/app/db"]


def test_a_role_assumed_with_the_definitions_own_keys_needs_no_listing(
    authed_api: APIClient, project: Project, server_profiles: str,
) -> None:
    own = {"role_arn": ROLE, "access_key_id": "team-key", "secret_access_key": "team-secret"}
    _aws_definition(project, {"kind": "aws", "auth": {"kind": "assume_role", "config": own},
                              "config": {"endpoint_url": server_profiles}})

    assert _sync(authed_api)["errors"] == []
    assert _parameters(server_profiles) == ["/app/db"]


# --- Contexts of the server's kubeconfig ------------------------------------------------------------

@pytest.fixture
def server_kubeconfig(kube: KubernetesServer, tmp_path: Path,  # noqa: F811
                      monkeypatch: pytest.MonkeyPatch) -> KubernetesServer:
    """The server's KUBECONFIG: its current context and an admin one, both reaching the peer."""
    users = [{"name": name, "user": {"token": kube.token}} for name in ("deployer", "admin")]
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "deploy",
              "clusters": [{"name": "peer", "cluster": {"server": kube.url}}], "users": users,
              "contexts": [{"name": "deploy", "context": {"cluster": "peer", "user": "deployer"}},
                           {"name": "prod-admin", "context": {"cluster": "peer", "user": "admin"}}]}
    path = tmp_path / "server-kubeconfig"
    path.write_text(yaml.safe_dump(config))
    monkeypatch.setenv("KUBECONFIG", str(path))
    return kube


def _kube_definition(project: Project, config: dict[str, Any]) -> None:
    project.write(definition({"name": "db", "kind": "random_string",
                              "targets": [target("cluster", "kubernetes_secret", secret_name="app", namespace="apps",
                                                 data_key="DB")]},
                             providers={"cluster": {"kind": "kubernetes", "config": config}}))


def test_selecting_a_context_of_the_servers_kubeconfig_is_refused_naming_the_setting(
    authed_api: APIClient, project: Project, server_kubeconfig: KubernetesServer,
) -> None:
    _kube_definition(project, {"context": "prod-admin"})

    result = _sync(authed_api)

    assert "SERVICE_KUBE_CONTEXTS" in _messages(result) and "prod-admin" in _messages(result)
    assert server_kubeconfig.requests == []


def test_a_context_the_operator_lists_may_be_selected(
    authed_api: APIClient, project: Project, server_kubeconfig: KubernetesServer, settings: Any,
) -> None:
    settings.SERVICE_KUBE_CONTEXTS = ("prod-admin",)
    _kube_definition(project, {"context": "prod-admin"})

    assert _sync(authed_api)["errors"] == []
    assert set(server_kubeconfig.data("apps", "app") or {}) == {"DB"}


def test_the_current_context_needs_no_listing(
    authed_api: APIClient, project: Project, server_kubeconfig: KubernetesServer,
) -> None:
    _kube_definition(project, {})

    assert _sync(authed_api)["errors"] == []
    assert set(server_kubeconfig.data("apps", "app") or {}) == {"DB"}


# --- A user-assigned managed identity of the Azure host ----------------------------------------------

def _azure_definition(project: Project, vault: str, auth: dict[str, Any]) -> None:
    project.write(definition({"name": "db", "kind": "random_string",
                              "targets": [target("azure", "azure_keyvault", secret_name="db")]},
                             providers={"azure": {"kind": "azure", "auth": auth,
                                                  "config": {"vault_url": vault, "connection_verify": "ca.pem"}}}))


def test_selecting_a_managed_identity_of_the_host_is_refused_naming_the_setting(
    authed_api: APIClient, project: Project, keyvault: AzureKeyVaultServer,  # noqa: F811
) -> None:
    (project.root / "ca.pem").write_bytes(keyvault.ca.read_bytes())
    _azure_definition(project, keyvault.url, {"kind": "managed_identity", "config": {"client_id": "prod-admin-id"}})

    result = _sync(authed_api)

    assert "SERVICE_AZURE_IDENTITIES" in _messages(result) and "prod-admin-id" in _messages(result)
    assert keyvault.requests == []


def test_a_managed_identity_the_operator_lists_passes_the_rule(
    authed_api: APIClient, project: Project, keyvault: AzureKeyVaultServer,  # noqa: F811
    settings: Any,
) -> None:
    settings.SERVICE_AZURE_IDENTITIES = ("prod-admin-id",)
    settings.SERVICE_CREDENTIAL_ADDRESSES = {"azure": [keyvault.url]}
    (project.root / "ca.pem").write_bytes(keyvault.ca.read_bytes())
    _azure_definition(project, keyvault.url, {"kind": "managed_identity", "config": {"client_id": "prod-admin-id"}})

    result = _sync(authed_api)

    # Past the rule the host's identity endpoint is asked for a token, and this host has none.
    assert result["errors"] and "SERVICE_AZURE_IDENTITIES" not in _messages(result)


# --- The variable vault_password_env names ----------------------------------------------------------

def _vault_definition(project: Project, variable: str | None) -> None:
    auth = {"vault_password_env": variable} if variable else {}
    project.write(definition({"name": "db", "kind": "random_string",
                              "targets": [target("repo", "ansible_vault_file")]},
                             providers={"repo": {"kind": "ansible_vault", "auth": {"kind": "ambient", "config": auth},
                                                 "config": {"vault_file": "secrets/vault.yml", "format": "yaml"}}}))


@pytest.mark.slow
@pytest.mark.parametrize("variable", ["AWS_SECRET_ACCESS_KEY", "DATABASE_URL", "SERVICE_API_KEY"])
def test_vault_password_env_naming_a_server_variable_is_refused_naming_the_setting(
    variable: str, authed_api: APIClient, project: Project, settings: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(variable, "operator-held-value")
    settings.SERVICE_DEFINITION_ENV = ("TEAM_*",)
    _vault_definition(project, variable)

    result = _sync(authed_api)

    assert "SERVICE_DEFINITION_ENV" in _messages(result)
    assert not (project.root / "secrets/vault.yml").exists()


@pytest.mark.slow
def test_the_service_settings_are_never_a_vault_password_whatever_the_list(
    authed_api: APIClient, project: Project, settings: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.SERVICE_DEFINITION_ENV = ("*",)
    _vault_definition(project, "SERVICE_API_KEY")

    assert "SERVICE_DEFINITION_ENV" in _messages(_sync(authed_api))
    assert not (project.root / "secrets/vault.yml").exists()


@pytest.mark.slow
@pytest.mark.parametrize("variable", ["TEAM_VAULT_PASSWORD", None])
def test_a_listed_variable_and_the_usual_one_give_the_password(
    variable: str | None, authed_api: APIClient, project: Project, settings: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(variable or "ANSIBLE_VAULT_PASSWORD", "vault password")
    settings.SERVICE_DEFINITION_ENV = ("TEAM_*",)
    _vault_definition(project, variable)

    assert _sync(authed_api)["errors"] == []
    assert (project.root / "secrets/vault.yml").read_text().startswith("$ANSIBLE_VAULT")
