"""github_pat against the GitHub peer: SecretZero's example (examples/github-pat.yml): an App
installation token minted with the App's JWT, scoped to the permissions and repositories asked,
written to a GitHub Actions secret; drift once it has expired."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from secretsapi.service.drift import detect_drift
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace, utc_now
from tests.factories import lock_entries, target, workspace
from tests.peers.github_app_server import GitHubAppServer


def _workspace(tmp_path: Path, server: GitHubAppServer, key: str | None = None, **config: Any) -> Workspace:
    provider = {"kind": "github", "auth": {"kind": "token", "config": {"token": server.token}},
                "config": {"api_url": server.url, "app_id": server.app_id, "private_key": key or server.private_key_pem,
                           "installation_id": server.installation_id}}
    secret = {"name": "ci_deploy_token", "kind": "github_pat",
              "config": {"provider": "github", "permissions": {"contents": "read", "metadata": "read"},
                         "repositories": ["my-service"], "token_name": "ci-deploy-readonly", "expires_in_hours": 1,
                         **config},
              "targets": [target("github", "github_secret", owner="my-org", repo="my-service",
                                 secret_name="CI_DEPLOY_TOKEN")]}
    return workspace(tmp_path, {"github": provider}, secret)


def test_sync_mints_an_installation_token_scoped_as_asked(tmp_path: Path, github_app: GitHubAppServer) -> None:
    ws = _workspace(tmp_path, github_app)
    assert sync(ws).errors == []
    value = github_app.value("repos/my-org/my-service", "CI_DEPLOY_TOKEN") or ""
    assert github_app.active(value)
    [made] = github_app.issued
    assert (made["permissions"], made["repositories"]) == ({"contents": "read", "metadata": "read"}, ["my-service"])
    record = lock_entries(ws)["ci_deploy_token"]["issued_token"]
    assert (record["name"], record["owner"]) == ("ci-deploy-readonly", github_app.installation_id)


def test_a_repository_outside_the_installation_fails_the_secret(tmp_path: Path, github_app: GitHubAppServer) -> None:
    result = sync(_workspace(tmp_path, github_app, repositories=["elsewhere"]))
    assert result.secrets_failed == ["ci_deploy_token"] and "rejected (422" in result.errors[0].message


def test_a_key_that_is_not_the_apps_is_refused_by_github(tmp_path: Path, github_app: GitHubAppServer) -> None:
    another_apps_key = GitHubAppServer().private_key_pem  # the same App id, another key
    result = sync(_workspace(tmp_path, github_app, key=another_apps_key))
    assert result.secrets_failed == ["ci_deploy_token"] and "not authenticated (401" in result.errors[0].message
    assert github_app.issued == []


def test_drift_reports_the_token_once_past_its_hour(tmp_path: Path, github_app: GitHubAppServer) -> None:
    ws = _workspace(tmp_path, github_app)
    sync(ws)
    assert not detect_drift(ws).has_drift
    later = Workspace(ws.definition_path, lock_timeout=10, clock=lambda: utc_now() + timedelta(hours=2))
    report = detect_drift(later)  # the Actions secret itself is write-only: "unverifiable" beside it
    assert report.has_drift and "token_expired" in [item.details["reason"] for item in report.details]
