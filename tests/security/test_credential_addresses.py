"""The server's own credentials go only where the operator said (issue 36, point 2).

The attacker can push a definition, not change the server. The server holds ambient credentials
(GITHUB_TOKEN, GITLAB_TOKEN, VERCEL_TOKEN, Jenkins' user and token, INFISICAL_TOKEN, VAULT_TOKEN
and ~/.vault-token, AWS keys with a session token, an Azure service principal's secret); the
definition points a provider at a listener on 127.0.0.1 and names no credential of its own. The
listener must receive nothing, the target fails naming SERVICE_CREDENTIAL_ADDRESSES, and once the
operator lists the address there the same definition works (the control: the listener then sees
the credential, so the test exercises the path it guards).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Project, definition, secret, target
from tests.peers.azure_keyvault_server import AzureKeyVaultServer
from tests.peers.listener import Listener
from tests.service.targets.conftest import SDK_ENVIRONMENT

SETTING = "SERVICE_CREDENTIAL_ADDRESSES"


@dataclass(frozen=True)
class Attack:
    kind: str  # the provider kind, as the setting lists it
    environment: dict[str, str]  # the server's ambient credential
    provider: Callable[[str], dict[str, Any]]  # the definition's provider block, at the listener's URL
    target: dict[str, Any]
    credential: str  # what would reach the listener


ATTACKS = {
    "github": Attack("github", {"GITHUB_TOKEN": "ghp-operator-token"},
                     lambda url: {"kind": "github", "config": {"api_url": url}},
                     target("github", "github_secret", owner="acme", repo="api"), "ghp-operator-token"),
    "gitlab": Attack("gitlab", {"GITLAB_TOKEN": "glpat-operator-token"},
                     lambda url: {"kind": "gitlab", "config": {"url": url}},
                     target("gitlab", "gitlab_variable", project="team/app"), "glpat-operator-token"),
    "vercel": Attack("vercel", {"VERCEL_TOKEN": "vercel-operator-token"},
                     lambda url: {"kind": "vercel", "config": {"api_url": url, "project_id": "prj"}},
                     target("vercel", "vercel_env"), "vercel-operator-token"),
    "jenkins": Attack("jenkins", {"JENKINS_USER": "ops", "JENKINS_TOKEN": "jenkins-operator-token"},
                      lambda url: {"kind": "jenkins", "config": {"url": url}},
                      target("jenkins", "jenkins_credential", credential_id="db"),
                      base64.b64encode(b"ops:jenkins-operator-token").decode()),
    "infisical": Attack("infisical", {"INFISICAL_TOKEN": "infisical-operator-token"},
                        lambda url: {"kind": "infisical", "config": {"api_url": f"{url}/api", "workspace_id": "ws"}},
                        target("infisical", "infisical"), "infisical-operator-token"),
    "vault": Attack("vault", {"VAULT_TOKEN": "hvs.operator-token"},
                    lambda url: {"kind": "vault", "config": {"address": url}},
                    target("vault", "vault_kv", path="app/db"), "hvs.operator-token"),
    "aws": Attack("aws", {"AWS_ACCESS_KEY_ID": "AKIAOPERATOR", "AWS_SECRET_ACCESS_KEY": "operator-secret",
                          "AWS_SESSION_TOKEN": "operator-session-token", "AWS_REGION": "us-east-1"},
                  lambda url: {"kind": "aws", "config": {"endpoint_url": url}},
                  target("aws", "ssm_parameter", name="/app/db"), "operator-session-token"),
}


@pytest.fixture
def server_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The server's environment with none of the machine's credentials (each test adds its own)."""
    for name in SDK_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "no-aws-credentials"))


@pytest.fixture
def listener() -> Iterator[Listener]:
    with Listener() as peer:
        yield peer


def _sync(api: APIClient, project: Project, provider: dict[str, Any], target_block: dict[str, Any]) -> Any:
    project.write(definition(secret("db", target_block), providers={target_block["provider"]: provider}))
    response = api.post("/sync", {}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_ambient_credential_never_goes_to_an_address_the_definition_names(
    name: str, authed_api: APIClient, project: Project, listener: Listener, server_environment: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attack = ATTACKS[name]
    for variable, value in attack.environment.items():
        monkeypatch.setenv(variable, value)

    result = _sync(authed_api, project, attack.provider(listener.url), attack.target)

    assert listener.requests == []
    (error,) = result["errors"]
    assert SETTING in error["message"] and "127.0.0.1" in error["message"]
    assert attack.credential not in str(result)
    assert not (project.root / ".gitsecrets.lock").exists() or "db" not in project.lock()["secrets"]


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_address_the_operator_lists_for_the_kind_receives_the_credential(
    name: str, authed_api: APIClient, project: Project, listener: Listener, server_environment: None,
    monkeypatch: pytest.MonkeyPatch, settings: Any,
) -> None:
    attack = ATTACKS[name]
    for variable, value in attack.environment.items():
        monkeypatch.setenv(variable, value)
    settings.SERVICE_CREDENTIAL_ADDRESSES = {attack.kind: (listener.url,)}

    _sync(authed_api, project, attack.provider(listener.url), attack.target)

    assert listener.saw(attack.credential)


def test_a_listing_for_another_kind_does_not_open_the_address(
    authed_api: APIClient, project: Project, listener: Listener, server_environment: None,
    monkeypatch: pytest.MonkeyPatch, settings: Any,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-operator-token")
    settings.SERVICE_CREDENTIAL_ADDRESSES = {"gitlab": (listener.url,)}
    attack = ATTACKS["github"]

    result = _sync(authed_api, project, attack.provider(listener.url), attack.target)

    assert listener.requests == []
    assert SETTING in result["errors"][0]["message"]


def test_plain_http_needs_the_operator_to_list_the_http_address(
    authed_api: APIClient, project: Project, listener: Listener, server_environment: None,
    monkeypatch: pytest.MonkeyPatch, settings: Any,
) -> None:
    monkeypatch.setenv("VAULT_TOKEN", "hvs.operator-token")
    https_only = listener.url.replace("http://", "https://")
    settings.SERVICE_CREDENTIAL_ADDRESSES = {"vault": (https_only,)}
    attack = ATTACKS["vault"]

    result = _sync(authed_api, project, attack.provider(listener.url), attack.target)

    assert listener.requests == []
    assert "http://" in result["errors"][0]["message"] and SETTING in result["errors"][0]["message"]


def test_the_vault_token_in_the_home_folder_is_never_sent_to_the_definitions_address(
    authed_api: APIClient, project: Project, listener: Listener, server_environment: None,
) -> None:
    (Path.home() / ".vault-token").write_text("hvs.file-token\n")
    attack = ATTACKS["vault"]

    result = _sync(authed_api, project, attack.provider(listener.url), attack.target)

    assert listener.requests == []
    assert SETTING in result["errors"][0]["message"]


def test_an_approle_login_of_the_definitions_own_carries_no_server_token(
    authed_api: APIClient, project: Project, listener: Listener, server_environment: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The definition's own AppRole may log in anywhere it names; the server's VAULT_TOKEN never rides along."""
    monkeypatch.setenv("VAULT_TOKEN", "hvs.operator-token")
    provider = {"kind": "vault", "auth": {"kind": "approle", "config": {"role_id": "r", "secret_id": "s"}},
                "config": {"address": listener.url}}

    _sync(authed_api, project, provider, target("vault", "vault_kv", path="app/db"))

    assert listener.requests  # the login went where the definition said, with its own credentials
    assert not listener.saw("hvs.operator-token")


def test_a_definitions_own_token_goes_where_the_definition_says(
    authed_api: APIClient, project: Project, listener: Listener, server_environment: None,
) -> None:
    """SecretZero's behaviour, kept: a credential the definition supplies is the author's own to send."""
    provider = {"kind": "github", "auth": {"kind": "token", "config": {"token": "ghp-authors-own"}},
                "config": {"api_url": listener.url}}

    _sync(authed_api, project, provider, ATTACKS["github"].target)

    assert listener.saw("ghp-authors-own")


@pytest.mark.server
def test_an_azure_service_principal_of_the_server_is_never_posted_to_the_definitions_authority(
    authed_api: APIClient, project: Project, server_environment: None, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    folder = tmp_path / "attacker"
    folder.mkdir()
    with AzureKeyVaultServer(folder) as attacker:
        ca = project.root / "ca.pem"
        ca.write_bytes(attacker.ca.read_bytes())
        monkeypatch.setenv("AZURE_TENANT_ID", attacker.tenant_id)
        monkeypatch.setenv("AZURE_CLIENT_ID", attacker.client_id)
        monkeypatch.setenv("AZURE_CLIENT_SECRET", attacker.client_secret)
        provider = {"kind": "azure", "config": {"vault_url": attacker.url, "authority_host": attacker.url,
                                                "disable_instance_discovery": True, "connection_verify": "ca.pem"}}

        result = _sync(authed_api, project, provider, target("azure", "azure_keyvault", secret_name="db"))

        assert attacker.requests == []
        assert attacker.secrets == {}
        assert SETTING in result["errors"][0]["message"]
