"""The one HTTP transport of the stores (``targets.rest``): whatever the server's environment says
about proxies, and whatever ~/.netrc holds for the store's host, requests go straight to the store
with the provider's own credential; the definition's store sees it, a proxy sees nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import azure_provider, secret, target, vault_provider, vercel_provider, workspace
from tests.peers.azure_keyvault_server import AzureKeyVaultServer
from tests.peers.github_server import GitHubServer
from tests.peers.http_peer import Peer
from tests.peers.infisical_server import InfisicalServer
from tests.peers.listener import Listener
from tests.peers.vault_server import VaultServer
from tests.peers.vercel_server import VercelServer


@pytest.fixture
def proxy(clean_sdk_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Listener]:
    """A proxy every proxy variable names, and a ~/.netrc with other credentials for loopback."""
    with Listener() as listener:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.setenv(name, listener.url)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        netrc = Path.home() / ".netrc"
        netrc.write_text("machine 127.0.0.1 login netrc-user password netrc-password\n")
        netrc.chmod(0o600)
        yield listener


def _github(tmp_path: Path, peer: GitHubServer) -> Workspace:
    peer.add_repo("acme", "api")
    provider = {"kind": "github", "auth": {"kind": "token", "config": {"token": peer.token}},
                "config": {"api_url": peer.url}}
    return workspace(tmp_path, {"github": provider},
                     secret("db", target("github", "github_secret", owner="acme", repo="api", secret_name="DB")))


def _infisical(tmp_path: Path, peer: InfisicalServer) -> Workspace:
    peer.add_project("ws-app")
    provider = {"kind": "infisical", "auth": {"kind": "universal_auth", "config": {
        "client_id": peer.client_id, "client_secret": peer.client_secret}},
        "config": {"api_url": f"{peer.url}/api", "workspace_id": "ws-app"}}
    return workspace(tmp_path, {"infisical": provider}, secret("db", target("infisical", "infisical")))


STORES: dict[str, tuple[type[Peer], Callable[[Path, Any], Workspace]]] = {
    "vault": (VaultServer, lambda tmp, peer: workspace(tmp, {"vault": vault_provider(peer.url)},
                                                        secret("db", target("vault", "vault_kv", path="app/db")))),
    "vercel": (VercelServer, lambda tmp, peer: workspace(tmp, {"vercel": vercel_provider(peer)},
                                                          secret("db", target("vercel", "vercel_env")))),
    "github": (GitHubServer, _github),
    "infisical": (InfisicalServer, _infisical),
}


@pytest.mark.parametrize("name", sorted(STORES))
def test_requests_ignore_the_environments_proxies_and_netrc(name: str, proxy: Listener, tmp_path: Path) -> None:
    peer_class, make = STORES[name]
    with peer_class() as peer:
        result = sync(make(tmp_path, peer))
        assert result.errors == [] and peer.requests
    assert proxy.requests == []


def test_key_vault_and_its_token_endpoint_ignore_the_environments_proxies(proxy: Listener, tmp_path: Path) -> None:
    folder = tmp_path / "tls"
    folder.mkdir()
    with AzureKeyVaultServer(folder) as keyvault:
        ws = workspace(tmp_path, {"azure": azure_provider(keyvault)},
                       secret("db", target("azure", "azure_keyvault", secret_name="db")))
        assert sync(ws).errors == []
        assert keyvault.value("db") is not None
    assert proxy.requests == []
