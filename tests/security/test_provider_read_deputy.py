"""The confused deputy (issue 36, point 2): a ``provider_read`` source reads with the server's own
credentials from the operator's store, so an author could copy another team's secret out of it
into a file they can read. With ambient credentials a read is allowed only under a location the
operator lists for that kind (SERVICE_PROVIDER_READ, empty by default); a read with the
definition's own credentials stays SecretZero's.
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Project, definition, target, vault_provider
from tests.peers.vault_server import VaultServer
from tests.service.targets.conftest import clean_sdk_env, vault  # noqa: F401 (fixtures)

SETTING = "SERVICE_PROVIDER_READ"
OTHER_TEAMS = "other-teams-database-password"


@pytest.fixture
def operators_vault(vault: VaultServer, monkeypatch: pytest.MonkeyPatch) -> VaultServer:  # noqa: F811
    """The operator's Vault, named by the server's own VAULT_ADDR and VAULT_TOKEN, holding two teams' secrets."""
    monkeypatch.setenv("VAULT_ADDR", vault.url)
    monkeypatch.setenv("VAULT_TOKEN", vault.token)
    vault.put("secret", "team-b/db", {"password": OTHER_TEAMS})
    vault.put("secret", "team-a/seed", {"password": "team-a-seed"})
    return vault


def _copy(project: Project, path: str, provider: dict[str, Any] | None = None) -> None:
    source = {"kind": "provider_read",
              "config": {"provider": "vault", "kind": "vault_kv", "read": {"path": path, "key": "password"}}}
    project.write(definition(
        {"name": "copy", "kind": "random_string", "source": source,
         "targets": [target("local", "file", path="out/copy.env")]},
        providers={"vault": provider or {"kind": "vault"}}))


def _sync(api: APIClient) -> Any:
    response = api.post("/sync", {}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_reading_another_teams_secret_with_the_servers_token_is_refused(
    authed_api: APIClient, project: Project, operators_vault: VaultServer,
) -> None:
    _copy(project, "team-b/db")

    result = _sync(authed_api)

    assert result["secrets_failed"] == ["copy"]
    assert SETTING in result["errors"][0]["message"]
    assert not (project.root / "out/copy.env").exists()
    assert [r for r in operators_vault.requests if "team-b" in r[1]] == []


def test_a_read_under_a_location_the_operator_lists_is_allowed(
    authed_api: APIClient, project: Project, operators_vault: VaultServer, settings: Any,
) -> None:
    settings.SERVICE_PROVIDER_READ = {"vault/vault_kv": ("secret/team-a/",)}
    _copy(project, "team-a/seed")

    assert _sync(authed_api)["errors"] == []
    assert (project.root / "out/copy.env").read_text() == "copy=team-a-seed\n"


@pytest.mark.parametrize("path", ["team-b/db", "team-a/../team-b/db", "team-a/./../team-b/db", "team-a-other/db"])
def test_a_read_outside_the_listed_locations_is_refused(
    authed_api: APIClient, project: Project, operators_vault: VaultServer, settings: Any, path: str,
) -> None:
    settings.SERVICE_PROVIDER_READ = {"vault/vault_kv": ("secret/team-a/",)}
    _copy(project, path)

    result = _sync(authed_api)

    assert SETTING in result["errors"][0]["message"]
    assert not (project.root / "out/copy.env").exists()


def test_a_read_with_the_definitions_own_token_stays_as_in_secretzero(
    authed_api: APIClient, project: Project, vault: VaultServer,  # noqa: F811
) -> None:
    vault.put("secret", "shared/seed", {"password": "seed-value"})
    _copy(project, "shared/seed", vault_provider(vault.url))

    assert _sync(authed_api)["errors"] == []
    assert (project.root / "out/copy.env").read_text() == "copy=seed-value\n"
