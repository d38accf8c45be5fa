"""github/github_secret through the engine against the GitHub test server: values sealed to the
scope's key (the test opens them with the server's private key), write-only drift, repair."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import lock_entries, secret, sync_while_held, target, workspace
from tests.peers.github_server import GitHubServer

REPO = "repos/acme/api"


def github_provider(url: str, token: str = "ghp-test-token", **config: Any) -> dict[str, Any]:
    return {"kind": "github", "auth": {"kind": "token", "config": {"token": token}},
            "config": {"api_url": url, **config}}


@pytest.fixture
def server(github: GitHubServer) -> GitHubServer:
    github.add_repo("acme", "api", "production")
    github.add_repo("acme", "web")
    github.orgs.add("acme")
    return github


def _repo_workspace(tmp_path: Path, server: GitHubServer, **provider: Any) -> Workspace:
    return workspace(
        tmp_path, {"gh": github_provider(server.url, **provider)},
        secret("deploy_token", target("local", "file", path="out/ci.env"),
               target("gh", "github_secret", owner="acme", repo="api", secret_name="DEPLOY_TOKEN")),
    )


def test_sync_seals_each_secret_to_its_scope_key_and_records_the_target_ids(
    tmp_path: Path, server: GitHubServer
) -> None:
    ws = workspace(
        tmp_path, {"gh": github_provider(server.url)},
        secret("deploy_token", target("gh", "github_secret", owner="acme", repo="api", secret_name="DEPLOY_TOKEN")),
        secret("db_password", target("gh", "github_secret", owner="acme", repo="api", environment="production")),
        secret("npm_token", target("gh", "github_secret", org="acme", visibility="selected",
                                   selected_repositories=["web"], selected_repository_ids=[7])),
    )
    result = sync(ws)
    assert result.errors == []
    lock = lock_entries(ws)
    # One target per secret, none with a `name`: each records SecretZero's id, the same for all three.
    stored = {
        "deploy_token": server.value(REPO, "DEPLOY_TOKEN"),
        "db_password": server.value(f"{REPO}/environments/production", "db_password"),
        "npm_token": server.value("orgs/acme", "npm_token"),
    }
    for name, value in stored.items():
        assert value is not None and lock[name]["targets"] == {"gh/github_secret/": sha256_text(value)}, name
        assert lock[name]["hash"] == sha256_text(value)
    organisation = server.record("orgs/acme", "NPM_TOKEN") or {}
    assert organisation["visibility"] == "selected"
    assert organisation["selected_repository_ids"] == [7, server.repos[("acme", "web")]]
    assert organisation["key_id"] == server.key_id


def test_sync_leaves_the_scopes_other_secrets_alone(tmp_path: Path, server: GitHubServer) -> None:
    (tmp_path / "other").mkdir()
    other = _repo_workspace(tmp_path / "other", server)
    ws = workspace(tmp_path, {"gh": github_provider(server.url)},
                   secret("api_key", target("gh", "github_secret", owner="acme", repo="api")))
    sync(other)
    kept = server.record(REPO, "DEPLOY_TOKEN")
    sync(ws)
    assert server.record(REPO, "DEPLOY_TOKEN") == kept
    assert server.value(REPO, "API_KEY") is not None


def test_drift_says_a_write_only_secret_is_unverifiable_without_counting_it_as_drift(
    tmp_path: Path, server: GitHubServer
) -> None:
    ws = _repo_workspace(tmp_path, server)
    sync(ws)
    result = detect_drift(ws)
    assert not result.has_drift and result.secrets_with_drift == []
    [item] = result.details
    assert item.details["reason"] == "unverifiable"
    assert item.details["target"] == "gh/github_secret/"
    assert item.details["changed_after_record"] is False
    assert item.details["store_updated_at"] is not None and item.details["recorded_at"] is not None


def test_a_secret_written_after_the_lockfile_time_is_drift_and_repair_puts_the_recorded_value_back(
    tmp_path: Path, server: GitHubServer
) -> None:
    ws = _repo_workspace(tmp_path, server)
    sync(ws)
    recorded = server.value(REPO, "DEPLOY_TOKEN")
    server.overwrite(REPO, "DEPLOY_TOKEN", "pasted by hand", at=datetime.now(UTC) + timedelta(minutes=1))

    drift = detect_drift(ws)
    assert drift.has_drift and drift.secrets_with_drift == ["deploy_token"]
    assert drift.details[0].details["changed_after_record"] is True

    repaired = sync(ws, repair=True)
    assert repaired.secrets_repaired == ["deploy_token"] and repaired.errors == []
    assert server.value(REPO, "DEPLOY_TOKEN") == recorded
    # The repair's write is recorded, so the store's newer time is no longer taken for a change.
    assert not detect_drift(ws).has_drift
    provenance = lock_entries(ws)["deploy_token"]["target_provenance"]
    assert len(provenance["gh/github_secret/"]) == 2  # the sync's write and the repair's


def test_a_deleted_secret_is_missing_and_repair_writes_it_again(tmp_path: Path, server: GitHubServer) -> None:
    ws = _repo_workspace(tmp_path, server)
    sync(ws)
    recorded = server.value(REPO, "DEPLOY_TOKEN")
    server.delete(REPO, "DEPLOY_TOKEN")
    assert [d.details["reason"] for d in detect_drift(ws).details] == ["target_missing"]
    assert sync(ws, repair=True).secrets_repaired == ["deploy_token"]
    assert server.value(REPO, "DEPLOY_TOKEN") == recorded


def test_a_write_only_target_is_never_the_copy_a_repair_takes(tmp_path: Path, server: GitHubServer) -> None:
    ws = workspace(tmp_path, {"gh": github_provider(server.url)},
                   secret("only_here", target("gh", "github_secret", owner="acme", repo="api"),
                          target("gh", "github_secret", owner="acme", repo="web")))
    sync(ws)
    server.delete("repos/acme/web", "ONLY_HERE")
    result = sync(ws, repair=True)
    assert result.secrets_repaired == [] and "no target holds the recorded value" in result.errors[0].message
    assert server.value("repos/acme/web", "ONLY_HERE") is None


def test_forced_rotation_seals_a_new_value(tmp_path: Path, server: GitHubServer) -> None:
    ws = _repo_workspace(tmp_path, server)
    sync(ws)
    before = server.value(REPO, "DEPLOY_TOKEN")
    result = execute_rotation(ws, force=True)
    assert result.errors == [] and result.rotated == ["deploy_token"]
    after = server.value(REPO, "DEPLOY_TOKEN")
    assert after != before and lock_entries(ws)["deploy_token"]["hash"] == sha256_text(after or "")


def test_dry_runs_send_no_request(tmp_path: Path, server: GitHubServer) -> None:
    ws = _repo_workspace(tmp_path, server)
    assert sync(ws, dry_run=True).secrets_generated == ["deploy_token"]
    assert server.requests == []
    sync(ws)
    server.delete(REPO, "DEPLOY_TOKEN")
    count = len(server.requests)
    assert sync(ws, dry_run=True, repair=True).secrets_repaired == ["deploy_token"]
    assert all(method == "GET" for method, _ in server.requests[count:])
    assert server.value(REPO, "DEPLOY_TOKEN") is None


@pytest.mark.parametrize("status", [403, 429])
def test_a_secondary_rate_limit_is_waited_out_and_retried(tmp_path: Path, server: GitHubServer, status: int) -> None:
    ws = _repo_workspace(tmp_path, server)
    server.throttle(status, 1, retry_after="0")
    assert sync(ws).errors == []
    assert server.requests[:2] == [("GET", "/repos/acme/api/actions/secrets/public-key")] * 2
    assert server.value(REPO, "DEPLOY_TOKEN") is not None


def test_a_plain_permission_error_is_not_retried(tmp_path: Path, server: GitHubServer) -> None:
    ws = _repo_workspace(tmp_path, server, token="ghp-test-token")
    server.throttle(403, 1)  # no Retry-After: GitHub's answer to a token without access
    [error] = sync(ws).errors
    assert error.message == "gh/github_secret/acme/api: permission denied (403)"
    assert len(server.requests) == 1


def test_the_token_comes_from_github_token_when_the_provider_names_none(
    tmp_path: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch, operator_allows: Any
) -> None:
    egress = operator_allows("github", server.url)  # the server's token goes to an Enterprise Server the operator lists
    ws = workspace(tmp_path, {"gh": {"kind": "github", "config": {"api_url": server.url}}},
                   secret("deploy_token", target("gh", "github_secret", owner="acme", repo="api")))
    ws = replace(ws, egress=egress)
    [error] = sync(ws).errors
    assert "no GitHub token" in error.message and "GITHUB_TOKEN" in error.message
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-wrong-token")
    [error] = sync(ws).errors
    assert error.message == ("gh/github_secret/acme/api: not authenticated (401: the token is missing, "
                             "invalid or expired)")
    monkeypatch.setenv("GITHUB_TOKEN", server.token)
    assert sync(ws).errors == []


def test_an_enterprise_server_api_root_is_used_as_given(tmp_path: Path, server: GitHubServer) -> None:
    ws = workspace(tmp_path, {"gh": github_provider(f"{server.url}/api/v3/")},
                   secret("deploy_token", target("gh", "github_secret", owner="acme", repo="api")))
    assert sync(ws).errors == []
    assert server.requests[0] == ("GET", "/api/v3/repos/acme/api/actions/secrets/public-key")


def test_an_unknown_repository_fails_only_its_target(tmp_path: Path, server: GitHubServer) -> None:
    ws = workspace(tmp_path, {"gh": github_provider(server.url)},
                   secret("deploy_token", target("local", "file", path="out/ci.env"),
                          target("gh", "github_secret", owner="acme", repo="gone")))
    result = sync(ws)
    assert result.secrets_generated == ["deploy_token"]
    assert [e.message for e in result.errors] == [
        "gh/github_secret/acme/gone: write failed (404: no such repository, environment or organisation, "
        "or the token cannot see it)"]


def test_writes_to_one_github_provider_overlap_up_to_its_max_concurrency(tmp_path: Path, server: GitHubServer) -> None:
    for index in range(5):
        server.add_repo("acme", f"r{index}")
    ws = workspace(tmp_path, {"gh": github_provider(server.url, max_concurrency=2)},
                   *[secret(f"s{i}", target("gh", "github_secret", owner="acme", repo=f"r{i}")) for i in range(5)])
    result = sync_while_held(ws, server, 2)
    assert result.errors == [] and len(result.secrets_generated) == 5
    assert server.max_in_flight == 2


def test_a_sync_slower_than_the_clock_allowance_is_not_taken_for_a_change(tmp_path: Path, server: GitHubServer) -> None:
    # The entry's time is taken before the writes; here the writes end a minute later.
    times = iter([datetime.now(UTC) - timedelta(minutes=1)])
    ws = replace(_repo_workspace(tmp_path, server), clock=lambda: next(times, datetime.now(UTC)))
    sync(ws)
    [item] = detect_drift(ws).details
    assert item.details["changed_after_record"] is False
    assert not sync(ws, repair=True).secrets_repaired


def test_the_lockfile_keeps_the_last_three_write_times_of_a_secret(tmp_path: Path, server: GitHubServer) -> None:
    ws = _repo_workspace(tmp_path, server)
    sync(ws)
    for _ in range(3):
        execute_rotation(ws, force=True)
    records = lock_entries(ws)["deploy_token"]["target_provenance"]["gh/github_secret/"]
    assert len(records) == 3 and records == sorted(records, key=lambda record: record["updated_at"])
    assert set(records[-1]) == {"updated_at", "actor"}  # SecretZero's TargetUpdate shape
