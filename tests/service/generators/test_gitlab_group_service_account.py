"""gitlab_group_service_account against the GitLab peer: SecretZero's example
(examples/gitlab-group-service-account.yml) with its group named: the account created once, its
token written to the targets, its memberships added, a rotation keeping the account."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import lock_entries, target, workspace
from tests.peers.gitlab_tokens_server import GitLabTokenServer


def _workspace(tmp_path: Path, server: GitLabTokenServer, group: str = "team") -> Workspace:
    provider = {"kind": "gitlab", "auth": {"kind": "token", "config": {"token": "glpat-test-token"}},
                "config": {"url": server.url, "project": "team/app"}}
    secret: dict[str, Any] = {
        "name": "ci_automation_bot", "kind": "gitlab_group_service_account",
        "config": {"provider": "gitlab", "group": group, "service_account_name": "secretzero-ci-bot",
                   "token_name": "secretzero-ci-token", "scopes": ["api", "read_repository", "write_repository"],
                   "expires_in_days": 90, "rotate_existing": True,
                   "memberships": [{"resource_type": "project", "resource": "auto", "access_level": 30}]},
        "targets": [target("gitlab", "gitlab_group_variable", group="team", masked=True, protected=True,
                           value_field="token")]}
    return workspace(tmp_path, {"gitlab": provider}, secret)


def _held(server: GitLabTokenServer) -> str:
    return str((server.variable("groups", "team", "ci_automation_bot") or {})["value"])


def test_sync_creates_the_account_and_a_token_of_it_for_the_targets(tmp_path: Path, gitlab: GitLabTokenServer) -> None:
    ws = _workspace(tmp_path, gitlab)
    assert sync(ws).errors == []
    assert gitlab.active(_held(gitlab))
    [account] = gitlab.accounts.values()
    assert account["name"] == "secretzero-ci-bot"
    record = lock_entries(ws)["ci_automation_bot"]["issued_token"]
    assert (record["user_id"], record["owner"]) == (account["id"], "team")


def test_the_memberships_are_added_with_auto_as_the_providers_project(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    sync(_workspace(tmp_path, gitlab))
    [account] = gitlab.accounts.values()
    assert gitlab.members[("projects", gitlab.owners["projects"]["team/app"])] == {account["id"]: 30}


def test_a_subgroup_puts_the_account_in_its_top_level_group(tmp_path: Path, gitlab: GitLabTokenServer) -> None:
    gitlab.add("groups", "team/sub")
    ws = _workspace(tmp_path, gitlab, group="team/sub")
    assert sync(ws).errors == []
    assert lock_entries(ws)["ci_automation_bot"]["issued_token"]["owner"] == "team"


def test_rotation_keeps_the_account_and_revokes_its_previous_token(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    ws = _workspace(tmp_path, gitlab)
    sync(ws)
    old = _held(gitlab)
    assert execute_rotation(ws, force=True).errors == []
    new = _held(gitlab)
    assert len(gitlab.accounts) == 1
    assert new != old and gitlab.active(new) and not gitlab.active(old)


def test_drift_reports_the_accounts_token_revoked_at_gitlab(tmp_path: Path, gitlab: GitLabTokenServer) -> None:
    ws = _workspace(tmp_path, gitlab)
    sync(ws)
    gitlab.revoke(gitlab.token_named("secretzero-ci-token")[0]["id"])
    assert [item.details["reason"] for item in detect_drift(ws).details] == ["token_revoked"]


def test_a_membership_that_fails_revokes_the_new_token_and_fails_the_secret(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    ws = _workspace(tmp_path, gitlab)
    text = ws.definition_path.read_text().replace("resource: auto", "resource: team/missing")
    ws.definition_path.write_text(text)
    result = sync(ws)
    assert result.secrets_failed == ["ci_automation_bot"] and "membership failed (404" in result.errors[0].message
    assert [t["revoked"] for t in gitlab.token_named("secretzero-ci-token")] == [True]
