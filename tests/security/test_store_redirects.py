"""A store that answers with a redirect (issue 36, point 6): no kind follows it with its credential,
and a write that got one is a failed write, never recorded as written.

The store's address is the definition's own (its own token, so the address checks do not apply);
what stands at it answers every request with a redirect to a second listener, which stands for
another host. That listener must receive nothing: not the credential (Vault's ``X-Vault-Token``
survives requests' own cross-host rule), not the value, and not the rewritten GET that Vault's
client then took for a successful write.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Project, definition, secret, target
from tests.peers.azure_keyvault_server import self_signed_tls
from tests.peers.listener import Listener

OWN = "authors-own-credential"
STORES: dict[str, tuple[Any, dict[str, Any]]] = {
    "vault": (lambda url: {"kind": "vault", "auth": {"kind": "token", "config": {"token": OWN}},
                           "config": {"address": url}},
              target("vault", "vault_kv", path="app/db")),
    "github": (lambda url: {"kind": "github", "auth": {"kind": "token", "config": {"token": OWN}},
                            "config": {"api_url": url}},
               target("github", "github_secret", owner="acme", repo="api")),
    "gitlab": (lambda url: {"kind": "gitlab", "auth": {"kind": "token", "config": {"token": OWN}},
                            "config": {"url": url}},
               target("gitlab", "gitlab_variable", project="team/app")),
    "vercel": (lambda url: {"kind": "vercel", "auth": {"kind": "token", "config": {"token": OWN}},
                            "config": {"api_url": url, "project_id": "prj"}},
               target("vercel", "vercel_env")),
    "jenkins": (lambda url: {"kind": "jenkins", "auth": {"kind": "token", "config": {"username": "u", "token": OWN}},
                             "config": {"url": url}},
                target("jenkins", "jenkins_credential", credential_id="db")),
    "infisical": (lambda url: {"kind": "infisical", "auth": {"kind": "token", "config": {"token": OWN}},
                               "config": {"api_url": f"{url}/api", "workspace_id": "ws"}},
                  target("infisical", "infisical")),
    "kubernetes": (lambda url: {"kind": "kubernetes", "auth": {"kind": "token", "config": {"token": OWN}},
                                "config": {"host": url}},
                   target("kubernetes", "kubernetes_secret", secret_name="app")),
    "aws": (lambda url: {"kind": "aws", "auth": {"kind": "static", "config": {
                "access_key_id": "AKIAOWN", "secret_access_key": OWN}},
                         "config": {"endpoint_url": url, "region": "us-east-1"}},
            target("aws", "ssm_parameter", name="/app/db")),
}


@pytest.fixture
def elsewhere() -> Iterator[Listener]:
    """The other host: answers everything 200 {}, as a server happy to take a write would."""
    with Listener(status=200) as peer:
        yield peer


def _sync(api: APIClient, project: Project, provider: dict[str, Any], target_block: dict[str, Any]) -> Any:
    project.write(definition(secret("db", target_block), providers={target_block["provider"]: provider}))
    response = api.post("/sync", {}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _recorded(project: Project) -> dict[str, Any]:
    if not project.lockfile.exists():
        return {}
    return dict(project.lock()["secrets"].get("db", {}).get("targets", {}))


@pytest.mark.server
@pytest.mark.parametrize("status", [301, 302, 307, 308])
@pytest.mark.parametrize("name", sorted(STORES))
def test_a_redirect_is_never_followed_and_the_write_fails(
    name: str, status: int, authed_api: APIClient, project: Project, elsewhere: Listener,
) -> None:
    provider, target_block = STORES[name]
    with Listener(redirect_to=elsewhere.url, redirect_status=status) as store:
        result = _sync(authed_api, project, provider(store.url), target_block)

        assert store.requests  # the store was asked, and answered with a redirect
    assert elsewhere.requests == []
    (error,) = result["errors"]
    assert "redirect" in error["message"]
    assert _recorded(project) == {}


@pytest.mark.server
def test_key_vault_redirects_are_never_followed(
    authed_api: APIClient, project: Project, tmp_path: Path,
) -> None:
    for folder in ("store", "other"):
        (tmp_path / folder).mkdir()
    store_tls, store_ca = self_signed_tls(tmp_path / "store")
    other_tls, other_ca = self_signed_tls(tmp_path / "other")
    (project.root / "ca.pem").write_bytes(store_ca.read_bytes() + other_ca.read_bytes())
    with Listener(other_tls, status=200) as other, Listener(store_tls, redirect_to=other.url) as store:
        provider = {"kind": "azure", "auth": {"kind": "service_principal", "config": {
                        "tenant_id": "t", "client_id": "c", "client_secret": OWN}},
                    "config": {"vault_url": store.url, "authority_host": store.url,
                               "disable_instance_discovery": True, "connection_verify": "ca.pem"}}

        result = _sync(authed_api, project, provider, target("azure", "azure_keyvault", secret_name="db"))

        assert store.requests
        assert other.requests == []
    assert result["errors"]
    assert _recorded(project) == {}
