"""jenkins/jenkins_credential through the engine against the Jenkins test server: root and folder
stores, the crumb, write-only drift, repair, throttling."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import lock_entries, secret, target, workspace
from tests.peers.jenkins_server import JenkinsServer


def jenkins_provider(url: str, token: str = "jenkins-api-token") -> dict[str, Any]:
    return {"kind": "jenkins", "auth": {"kind": "token", "config": {"url": url, "username": "admin", "token": token}}}


@pytest.fixture
def server(jenkins: JenkinsServer) -> JenkinsServer:
    jenkins.folders.update({"team", "team/app"})
    return jenkins


def _workspace(tmp_path: Path, server: JenkinsServer) -> Workspace:
    return workspace(
        tmp_path, {"ci": jenkins_provider(server.url)},
        secret("api_key", target("local", "file", path="out/ci.env"),
               target("ci", "jenkins_credential", credential_id="api-key")),
        secret("deploy_password", target("ci", "jenkins_credential", credential_id="deploy", folder="team/app",
                                         credential_type="username_password", username="deployer",
                                         description="Deploy user")),
    )


def test_sync_creates_credentials_in_the_root_and_folder_stores(tmp_path: Path, server: JenkinsServer) -> None:
    ws = _workspace(tmp_path, server)
    assert sync(ws).errors == []
    root = server.stored("api-key") or {}
    folder = server.stored("deploy", folder="team/app") or {}
    assert root["class"].endswith("StringCredentialsImpl") and root["description"] == "api_key"
    assert folder["class"].endswith("UsernamePasswordCredentialsImpl")
    assert (folder["username"], folder["description"]) == ("deployer", "Deploy user")
    lock = lock_entries(ws)
    # SecretZero's ids: `credential_id` and `folder` are not among the keys it takes one from.
    assert lock["api_key"]["targets"]["ci/jenkins_credential/"] == sha256_text(root["secret"])
    assert lock["deploy_password"]["targets"] == {"ci/jenkins_credential/": sha256_text(folder["secret"])}
    assert ("POST", "/job/team/job/app/credentials/store/folder/domain/_/createCredentials") in server.requests


def test_a_rotation_replaces_the_credential_and_leaves_the_others(tmp_path: Path, server: JenkinsServer) -> None:
    ws = _workspace(tmp_path, server)
    sync(ws)
    before, kept = server.secret("api-key"), server.stored("deploy", folder="team/app")
    assert execute_rotation(ws, force=True, secret_name="api_key").errors == []
    assert server.secret("api-key") != before
    assert server.stored("deploy", folder="team/app") == kept
    assert ("POST", "/credentials/store/system/domain/_/credential/api-key/config.xml") in server.requests


def test_drift_says_credentials_are_unverifiable_and_a_deleted_one_is_missing(
    tmp_path: Path, server: JenkinsServer
) -> None:
    ws = _workspace(tmp_path, server)
    sync(ws)
    result = detect_drift(ws)
    assert not result.has_drift
    assert {d.details["reason"] for d in result.details} == {"unverifiable"}
    assert all(d.details["changed_after_record"] is None for d in result.details)
    server.delete("api-key")
    assert detect_drift(ws).secrets_with_drift == ["api_key"]


def test_repair_writes_a_deleted_credential_again_from_another_copy(tmp_path: Path, server: JenkinsServer) -> None:
    ws = _workspace(tmp_path, server)
    sync(ws)
    recorded = server.secret("api-key")
    server.delete("api-key")
    assert sync(ws, repair=True).secrets_repaired == ["api_key"]
    assert server.secret("api-key") == recorded


@pytest.mark.server
def test_an_instance_without_csrf_protection_needs_no_crumb(tmp_path: Path, clean_sdk_env: None) -> None:
    with JenkinsServer(csrf=False) as server:
        ws = workspace(tmp_path, {"ci": jenkins_provider(server.url)},
                       secret("api_key", target("ci", "jenkins_credential", credential_id="api-key")))
        assert sync(ws).errors == []
        assert server.secret("api-key") is not None


@pytest.mark.parametrize("status", [429, 503])
def test_a_throttled_answer_is_retried(tmp_path: Path, server: JenkinsServer, status: int) -> None:
    ws = workspace(tmp_path, {"ci": jenkins_provider(server.url)},
                   secret("api_key", target("ci", "jenkins_credential", credential_id="api-key")))
    server.throttle(status, 1, retry_after="0")
    assert sync(ws).errors == []
    assert server.requests[0] == server.requests[1]


def test_a_wrong_token_fails_the_target_without_showing_it(tmp_path: Path, server: JenkinsServer) -> None:
    ws = workspace(tmp_path, {"ci": jenkins_provider(server.url, token="not-the-token")},
                   secret("api_key", target("ci", "jenkins_credential", credential_id="api-key")))
    [error] = sync(ws).errors
    assert error.message == ("ci/jenkins_credential/api-key: not authenticated (401: the token is missing, "
                             "invalid or expired)")


def test_an_unknown_folder_fails_only_its_target(tmp_path: Path, server: JenkinsServer) -> None:
    ws = workspace(tmp_path, {"ci": jenkins_provider(server.url)},
                   secret("api_key", target("local", "file", path="out/ci.env"),
                          target("ci", "jenkins_credential", credential_id="api-key", folder="gone")))
    result = sync(ws)
    assert result.secrets_generated == ["api_key"]
    assert [e.message for e in result.errors] == [
        "ci/jenkins_credential/gone/api-key: write failed (404: no such folder or domain, or the token "
        "cannot see it)"]


def test_dry_run_sends_no_request(tmp_path: Path, server: JenkinsServer) -> None:
    assert sync(_workspace(tmp_path, server), dry_run=True).secrets_generated == ["api_key", "deploy_password"]
    assert server.requests == []


def test_url_user_and_token_come_from_the_environment_when_the_provider_names_none(
    tmp_path: Path, server: JenkinsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(tmp_path, {"ci": {"kind": "jenkins"}},
                   secret("api_key", target("ci", "jenkins_credential", credential_id="api-key")))
    [error] = sync(ws).errors
    assert error.message == "provider 'ci': no Jenkins URL (set url in the provider, or JENKINS_URL)"
    monkeypatch.setenv("JENKINS_URL", server.url)
    monkeypatch.setenv("JENKINS_USER", "admin")
    monkeypatch.setenv("JENKINS_API_TOKEN", "jenkins-api-token")
    assert sync(ws).errors == []
    assert server.secret("api-key") is not None
