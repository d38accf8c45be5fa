"""Protocol peers for the remote target kinds: moto's AWS server, and the Vault, Kubernetes, Azure
Key Vault (HTTPS, with a throwaway certificate) and Vercel test servers of tests/peers, all on
loopback ports; plus a definition-in-a-folder helper."""

from __future__ import annotations

import logging
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from secretsapi.service.definition.egress import Egress
from tests.peers.azure_keyvault_server import AzureKeyVaultServer
from tests.peers.github_server import GitHubServer
from tests.peers.gitlab_server import GitLabServer
from tests.peers.infisical_server import InfisicalServer
from tests.peers.jenkins_server import JenkinsServer
from tests.peers.kubernetes_server import KubernetesServer
from tests.peers.vault_server import VaultServer
from tests.peers.vercel_server import VercelServer
from tests.processes.live import free_port

SDK_ENVIRONMENT = (
    "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "VAULT_ADDR", "VAULT_TOKEN", "VAULT_NAMESPACE",
    "VAULT_CACERT", "VAULT_SKIP_VERIFY", "KUBECONFIG", "KUBERNETES_SERVICE_HOST",
    "AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_AUTHORITY_HOST",
    "AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_USERNAME", "AZURE_FEDERATED_TOKEN_FILE", "IDENTITY_ENDPOINT",
    "MSI_ENDPOINT", "VERCEL_TOKEN", "VERCEL_TEAM_ID",
    "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "GITLAB_TOKEN", "GITLAB_PRIVATE_TOKEN", "GITLAB_URL",
    "CI_SERVER_URL", "JENKINS_URL", "JENKINS_USER", "JENKINS_USERNAME", "JENKINS_TOKEN", "JENKINS_API_TOKEN",
    "INFISICAL_TOKEN", "INFISICAL_SERVICE_TOKEN", "INFISICAL_API_URL", "INFISICAL_UNIVERSAL_AUTH_CLIENT_ID",
    "INFISICAL_UNIVERSAL_AUTH_CLIENT_SECRET",
)


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    """moto in server mode: boto3 talks HTTP to it exactly as to AWS (no in-process mocking)."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per request
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def clean_sdk_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials or endpoints from the machine running the tests."""
    for name in SDK_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("HOME", str(tmp_path))  # ~/.vault-token, ~/.kube/config


@pytest.fixture
def aws(moto_url: str, clean_sdk_env: None) -> str:
    """moto's endpoint, emptied for this test."""
    request = urllib.request.Request(f"{moto_url}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=10):
        pass
    return moto_url


@pytest.fixture
def vault(clean_sdk_env: None) -> Iterator[VaultServer]:
    with VaultServer() as server:
        yield server


@pytest.fixture
def kube(clean_sdk_env: None) -> Iterator[KubernetesServer]:
    with KubernetesServer() as server:
        yield server


@pytest.fixture
def keyvault(clean_sdk_env: None, tmp_path: Path) -> Iterator[AzureKeyVaultServer]:
    """A vault and its token endpoint over HTTPS; ``keyvault.ca`` is the CA bundle to trust."""
    folder = tmp_path / "tls"
    folder.mkdir()
    with AzureKeyVaultServer(folder) as server:
        yield server


@pytest.fixture
def vercel(clean_sdk_env: None) -> Iterator[VercelServer]:
    with VercelServer() as server:
        yield server


@pytest.fixture
def github(clean_sdk_env: None) -> Iterator[GitHubServer]:
    with GitHubServer() as server:
        yield server


@pytest.fixture
def gitlab(clean_sdk_env: None) -> Iterator[GitLabServer]:
    with GitLabServer() as server:
        yield server


@pytest.fixture
def jenkins(clean_sdk_env: None) -> Iterator[JenkinsServer]:
    with JenkinsServer() as server:
        yield server


@pytest.fixture
def infisical(clean_sdk_env: None) -> Iterator[InfisicalServer]:
    with InfisicalServer() as server:
        yield server


@pytest.fixture
def operator_allows() -> Callable[..., Egress]:
    """``operator_allows(kind, url, ...)``: the rule of an operator who lists ``url`` for provider
    kind ``kind`` in SERVICE_CREDENTIAL_ADDRESSES (the server's own credentials may go there), for
    a workspace's ``egress``."""

    def allow(kind: str, *urls: str) -> Egress:
        return Egress({kind: urls})

    return allow
