"""Peers of the provider-backed generators, and no credential from the machine running the tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.peers.azure_devops_server import AzureDevOpsServer
from tests.peers.github_app_server import GitHubAppServer
from tests.peers.gitlab_tokens_server import GitLabTokenServer

SERVER_ENVIRONMENT = ("GITLAB_TOKEN", "GITLAB_PRIVATE_TOKEN", "GITLAB_URL", "CI_SERVER_URL", "GITLAB_CI",
                      "CI_PROJECT_PATH", "CI_PROJECT_NAMESPACE", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL",
                      "AZDO_PAT", "AZURE_DEVOPS_EXT_PAT", "AZDO_ORGANIZATION", "GITHUB_APP_ID",
                      "GITHUB_APP_PRIVATE_KEY", "GITHUB_APP_PRIVATE_KEY_PATH", "GITHUB_APP_INSTALLATION_ID")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SERVER_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def gitlab(clean_env: None) -> Iterator[GitLabTokenServer]:
    with GitLabTokenServer() as server:
        server.add("projects", "team/app")
        server.add("groups", "team")
        yield server


@pytest.fixture
def azdo(clean_env: None) -> Iterator[AzureDevOpsServer]:
    with AzureDevOpsServer() as server:
        yield server


@pytest.fixture
def github_app(clean_env: None) -> Iterator[GitHubAppServer]:
    with GitHubAppServer() as server:
        server.add_repo("my-org", "my-service")
        yield server
