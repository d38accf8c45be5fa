"""gitlab_project_token end to end against the GitLab peer: created at GitLab, written to the
targets, recorded without its value, rotated with the old token revoked only after the commit,
a failed revoke reported and retried, drift of a token revoked or expired at GitLab, repair."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import lock_entries, target, workspace
from tests.peers.gitlab_tokens_server import GitLabTokenServer


def gitlab_provider(url: str, token: str = "glpat-test-token") -> dict[str, Any]:
    return {"kind": "gitlab", "auth": {"kind": "token", "config": {"token": token}}, "config": {"url": url}}


def token_secret(**config: Any) -> dict[str, Any]:
    """SecretZero's example (examples/gitlab-project-token.yml), with a file target beside the variable."""
    return {"name": "ci_deploy_token", "kind": "gitlab_project_token",
            "config": {"provider": "gitlab", "project": "team/app", "token_name": "secretzero-ci-deploy",
                       "scopes": ["read_repository", "write_repository"], "access_level": 30,
                       "expires_in_days": 30, **config},
            "targets": [target("gitlab", "gitlab_variable", project="team/app", masked=True, protected=True),
                        target("local", "file", path="out/ci.env", format="dotenv")]}


def _workspace(tmp_path: Path, server: GitLabTokenServer, **config: Any) -> Workspace:
    return workspace(tmp_path, {"gitlab": gitlab_provider(server.url)}, token_secret(**config))


def _held(tmp_path: Path) -> str:
    line = (tmp_path / "out" / "ci.env").read_text().strip()
    return line.split("=", 1)[1].strip('"')


def test_sync_creates_a_project_token_at_gitlab_and_writes_it_to_every_target(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    result = sync(_workspace(tmp_path, gitlab))
    assert result.errors == [] and result.secrets_generated == ["ci_deploy_token"]
    value = _held(tmp_path)
    assert gitlab.active(value)
    assert (gitlab.variable("projects", "team/app", "ci_deploy_token") or {})["value"] == value
    made = gitlab.token_named("secretzero-ci-deploy")
    assert [(t["scopes"], t["access_level"]) for t in made] == [(["read_repository", "write_repository"], 30)]


def test_the_lockfile_records_the_tokens_id_and_expiry_never_its_text(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    ws = _workspace(tmp_path, gitlab)
    sync(ws)
    value = _held(tmp_path)
    entry = lock_entries(ws)["ci_deploy_token"]
    made = gitlab.token_named("secretzero-ci-deploy")[0]
    assert entry["hash"] == sha256_text(value)
    assert {k: entry["issued_token"][k] for k in ("kind", "id", "owner", "name", "expires_at")} == {
        "kind": "gitlab_project_token", "id": made["id"], "owner": "team/app", "name": "secretzero-ci-deploy",
        "expires_at": made["expires_at"]}
    assert value not in ws.lockfile_path.read_text()


def test_rotation_creates_a_new_token_then_revokes_the_previous_one(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    ws = _workspace(tmp_path, gitlab)
    sync(ws)
    old = _held(tmp_path)
    result = execute_rotation(ws, force=True)
    assert result.errors == [] and result.rotated == ["ci_deploy_token"]
    new = _held(tmp_path)
    assert new != old and gitlab.active(new) and not gitlab.active(old)
    assert (gitlab.variable("projects", "team/app", "ci_deploy_token") or {})["value"] == new
    assert lock_entries(ws)["ci_deploy_token"]["superseded_tokens"] == []


def test_revoke_existing_false_keeps_the_previous_token(tmp_path: Path, gitlab: GitLabTokenServer) -> None:
    ws = _workspace(tmp_path, gitlab, revoke_existing=False)
    sync(ws)
    old = _held(tmp_path)
    execute_rotation(ws, force=True)
    assert gitlab.active(old) and gitlab.active(_held(tmp_path))


def test_revoke_existing_also_revokes_other_tokens_of_the_same_name(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    by_hand = gitlab.add_token("projects", "team/app", "secretzero-ci-deploy")
    other = gitlab.add_token("projects", "team/app", "someone-else")
    sync(_workspace(tmp_path, gitlab))
    states = {t["id"]: t["revoked"] for t in gitlab.tokens.values()}
    assert states[by_hand] is True and states[other] is False


def test_a_revoke_that_fails_is_reported_kept_and_retried_by_the_next_sync(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    ws = _workspace(tmp_path, gitlab)
    sync(ws)
    old = _held(tmp_path)
    gitlab.refuse_deletes = True
    result = execute_rotation(ws, force=True)
    assert result.rotated == ["ci_deploy_token"]
    assert [e.message for e in result.errors if "could not be revoked" in e.message and "403" in e.message]
    assert gitlab.active(old)
    assert [r["kind"] for r in lock_entries(ws)["ci_deploy_token"]["superseded_tokens"]] == ["gitlab_project_token"]
    gitlab.refuse_deletes = False
    assert sync(ws).errors == []
    assert not gitlab.active(old) and lock_entries(ws)["ci_deploy_token"]["superseded_tokens"] == []


def test_a_token_no_target_took_is_revoked_at_once(tmp_path: Path, gitlab: GitLabTokenServer) -> None:
    document = token_secret()
    document["targets"] = [target("gitlab", "gitlab_variable", project="team/missing")]
    ws = workspace(tmp_path, {"gitlab": gitlab_provider(gitlab.url)}, document)
    result = sync(ws)
    assert result.secrets_failed == ["ci_deploy_token"]
    assert [t["revoked"] for t in gitlab.token_named("secretzero-ci-deploy")] == [True]


@pytest.mark.parametrize("change", ["revoke", "expire"])
def test_drift_reports_a_token_revoked_or_expired_at_gitlab(
    tmp_path: Path, gitlab: GitLabTokenServer, change: str
) -> None:
    ws = _workspace(tmp_path, gitlab)
    sync(ws)
    assert not detect_drift(ws).has_drift
    getattr(gitlab, change)(gitlab.token_named("secretzero-ci-deploy")[0]["id"])
    report = detect_drift(ws)
    assert report.has_drift and report.secrets_with_drift == ["ci_deploy_token"]
    reasons = [item.details["reason"] for item in report.details]
    assert reasons == ["token_revoked" if change == "revoke" else "token_expired"]


def test_repair_replaces_a_revoked_token_with_a_new_one(tmp_path: Path, gitlab: GitLabTokenServer) -> None:
    ws = _workspace(tmp_path, gitlab)
    sync(ws)
    old = _held(tmp_path)
    gitlab.revoke(gitlab.token_named("secretzero-ci-deploy")[0]["id"])
    assert sync(ws).secrets_generated == []  # a plain sync leaves it: drift says so
    result = sync(ws, repair=True)
    assert result.errors == [] and result.secrets_generated == ["ci_deploy_token"]
    new = _held(tmp_path)
    assert new != old and gitlab.active(new)
    assert not detect_drift(ws).has_drift


def test_a_failed_creation_fails_the_secret_naming_the_status_not_the_answer(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    ws = workspace(tmp_path, {"gitlab": gitlab_provider(gitlab.url, token="wrong")}, token_secret())
    result = sync(ws)
    assert result.secrets_failed == ["ci_deploy_token"]
    assert "not authenticated (401" in result.errors[0].message
    assert not (tmp_path / "out" / "ci.env").exists()
    assert "ci_deploy_token" not in json.loads(ws.lockfile_path.read_text())["secrets"]


def test_a_dry_run_repair_names_the_revoked_token_and_creates_nothing(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    ws = _workspace(tmp_path, gitlab)
    sync(ws)
    gitlab.revoke(gitlab.token_named("secretzero-ci-deploy")[0]["id"])
    result = sync(ws, repair=True, dry_run=True)
    assert result.secrets_generated == ["ci_deploy_token"] and result.secrets_skipped == []
    assert len(gitlab.tokens) == 1


@pytest.mark.parametrize("origin", ["git@gitlab.example.com:team/app.git", "https://gitlab.example.com/team/app.git"])
def test_project_auto_is_the_definition_folders_git_remote_as_in_secretzero(
    tmp_path: Path, gitlab: GitLabTokenServer, origin: str
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", origin], check=True)
    ws = _workspace(tmp_path, gitlab, project="auto")
    assert sync(ws).errors == []
    assert lock_entries(ws)["ci_deploy_token"]["issued_token"]["owner"] == "team/app"
