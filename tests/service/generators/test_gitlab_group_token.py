"""gitlab_group_token against the GitLab peer: SecretZero's example (examples/gitlab-group-token.yml)
with the group named, and ``group: auto`` resolved from the provider's settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from tests.factories import lock_entries, target, workspace
from tests.peers.gitlab_tokens_server import GitLabTokenServer


def _provider(url: str, **config: Any) -> dict[str, Any]:
    return {"kind": "gitlab", "auth": {"kind": "token", "config": {"token": "glpat-test-token"}},
            "config": {"url": url, **config}}


def _secret(group: str) -> dict[str, Any]:
    return {"name": "org_deploy_token", "kind": "gitlab_group_token",
            "config": {"provider": "gitlab", "group": group, "token_name": "secretzero-org-deploy",
                       "scopes": ["read_repository", "write_repository"], "access_level": 30,
                       "expires_in_days": 365, "revoke_existing": True},
            "targets": [target("gitlab", "gitlab_group_variable", group="team", masked=True, protected=True)]}


def test_sync_creates_a_group_token_and_writes_it_to_the_group_variable(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    ws = workspace(tmp_path, {"gitlab": _provider(gitlab.url)}, _secret("team"))
    assert sync(ws).errors == []
    value = (gitlab.variable("groups", "team", "org_deploy_token") or {})["value"]
    assert gitlab.active(value)
    assert lock_entries(ws)["org_deploy_token"]["issued_token"]["owner"] == "team"
    assert [t["owner"][0] for t in gitlab.token_named("secretzero-org-deploy")] == ["groups"]


def test_group_auto_is_the_group_of_the_providers_project(tmp_path: Path, gitlab: GitLabTokenServer) -> None:
    ws = workspace(tmp_path, {"gitlab": _provider(gitlab.url, project="team/app")}, _secret("auto"))
    assert sync(ws).errors == []
    assert lock_entries(ws)["org_deploy_token"]["issued_token"]["owner"] == "team"


def test_group_auto_without_a_setting_fails_the_secret_saying_what_to_set(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    result = sync(workspace(tmp_path, {"gitlab": _provider(gitlab.url)}, _secret("auto")))
    assert result.secrets_failed == ["org_deploy_token"]
    assert "group: auto needs the provider's group setting" in result.errors[0].message


def test_rotating_a_group_token_revokes_the_previous_one(tmp_path: Path, gitlab: GitLabTokenServer) -> None:
    ws = workspace(tmp_path, {"gitlab": _provider(gitlab.url)}, _secret("team"))
    sync(ws)
    old = (gitlab.variable("groups", "team", "org_deploy_token") or {})["value"]
    assert execute_rotation(ws, force=True).errors == []
    new = (gitlab.variable("groups", "team", "org_deploy_token") or {})["value"]
    assert new != old and gitlab.active(new) and not gitlab.active(old)
