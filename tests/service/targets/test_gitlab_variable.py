"""gitlab/gitlab_variable and gitlab/gitlab_group_variable through the engine against the GitLab
test server: attributes, read-back drift, repair, hidden variables, throttling."""

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
from tests.peers.gitlab_server import GitLabServer


def gitlab_provider(url: str, token: str = "glpat-test-token") -> dict[str, Any]:
    return {"kind": "gitlab", "auth": {"kind": "token", "config": {"token": token}}, "config": {"url": url}}


@pytest.fixture
def server(gitlab: GitLabServer) -> GitLabServer:
    gitlab.add("projects", "team/app")
    gitlab.add("groups", "team")
    return gitlab


def _workspace(tmp_path: Path, server: GitLabServer) -> Workspace:
    return workspace(
        tmp_path, {"gl": gitlab_provider(server.url)},
        secret("db_password", target("local", "file", path="out/ci.env"),
               target("gl", "gitlab_variable", project="team/app", key="DB_PASSWORD", protected=True,
                      environment_scope="production", raw=True, description="managed")),
        secret("registry_token", target("gl", "gitlab_group_variable", group="team", masked=False,
                                        variable_type="file")),
    )


def test_sync_creates_project_and_group_variables_with_their_attributes(tmp_path: Path, server: GitLabServer) -> None:
    ws = _workspace(tmp_path, server)
    assert sync(ws).errors == []
    project = server.variable("projects", "team/app", "DB_PASSWORD", "production") or {}
    assert {k: project[k] for k in ("protected", "masked", "raw", "variable_type", "description")} == {
        "protected": True, "masked": True, "raw": True, "variable_type": "env_var", "description": "managed"}
    group = server.variable("groups", "team", "registry_token") or {}
    assert (group["masked"], group["protected"], group["variable_type"]) == (False, False, "file")
    lock = lock_entries(ws)
    # SecretZero's ids: the provider alias and the kind, then nothing (neither target has a `name`).
    assert lock["db_password"]["targets"]["gl/gitlab_variable/"] == sha256_text(project["value"])
    assert lock["registry_token"]["targets"] == {"gl/gitlab_group_variable/": sha256_text(group["value"])}
    assert not detect_drift(ws).has_drift


def test_other_variables_and_other_scopes_of_a_key_are_left_alone(tmp_path: Path, server: GitLabServer) -> None:
    server.put_variable("projects", "team/app", "DB_PASSWORD", "staging-value", scope="staging")
    server.put_variable("projects", "team/app", "OTHER", "kept-value")
    sync(_workspace(tmp_path, server))
    assert (server.variable("projects", "team/app", "DB_PASSWORD", "staging") or {})["value"] == "staging-value"
    assert (server.variable("projects", "team/app", "OTHER") or {})["value"] == "kept-value"


def test_an_unchanged_variable_is_not_written_again_and_a_rotation_updates_it(
    tmp_path: Path, server: GitLabServer
) -> None:
    ws = _workspace(tmp_path, server)
    sync(ws)
    writes = server.writes
    assert sync(ws, force=False).secrets_generated == [] and server.writes == writes
    before = (server.variable("projects", "team/app", "DB_PASSWORD", "production") or {})["value"]
    assert execute_rotation(ws, force=True, secret_name="db_password").errors == []
    after = (server.variable("projects", "team/app", "DB_PASSWORD", "production") or {})["value"]
    assert after != before and server.writes == writes + 1


def test_drift_reads_the_value_back_and_repair_restores_it(tmp_path: Path, server: GitLabServer) -> None:
    ws = _workspace(tmp_path, server)
    sync(ws)
    recorded = (server.variable("projects", "team/app", "DB_PASSWORD", "production") or {})["value"]
    server.set_value("projects", "team/app", "DB_PASSWORD", "edited-in-the-ui", scope="production")
    [item] = detect_drift(ws).details
    assert (item.secret, item.details["reason"]) == ("db_password", "value_changed")
    assert item.details["actual_hash"] == sha256_text("edited-in-the-ui")
    assert sync(ws, repair=True).secrets_repaired == ["db_password"]
    assert (server.variable("projects", "team/app", "DB_PASSWORD", "production") or {})["value"] == recorded
    assert not detect_drift(ws).has_drift


def test_a_hidden_variable_is_unverifiable(tmp_path: Path, server: GitLabServer) -> None:
    ws = workspace(tmp_path, {"gl": gitlab_provider(server.url)},
                   secret("hidden", target("gl", "gitlab_variable", project="team/app", key="HIDDEN")))
    sync(ws)
    value = (server.variable("projects", "team/app", "HIDDEN") or {})["value"]
    server.put_variable("projects", "team/app", "HIDDEN", value, masked=True, masked_and_hidden=True)
    result = detect_drift(ws)
    assert [d.details["reason"] for d in result.details] == ["unverifiable"] and not result.has_drift
    assert result.details[0].details["store_updated_at"] is None
    assert result.details[0].details["changed_after_record"] is None


def test_a_masked_value_gitlab_refuses_fails_the_target_without_quoting_it(
    tmp_path: Path, server: GitLabServer
) -> None:
    ws = workspace(tmp_path, {"gl": gitlab_provider(server.url)},
                   {"name": "short", "kind": "random_string", "config": {"length": 6},
                    "targets": [target("gl", "gitlab_variable", project="team/app")]})
    [error] = sync(ws).errors
    assert error.message == "gl/gitlab_variable/team/app: write rejected (400: the store refused the request)"


def test_a_missing_project_is_not_taken_for_a_missing_variable(tmp_path: Path, server: GitLabServer) -> None:
    ws = workspace(tmp_path, {"gl": gitlab_provider(server.url)},
                   secret("token", target("gl", "gitlab_variable", project="team/gone")))
    [error] = sync(ws).errors
    assert "404: no such project or group" in error.message
    assert [method for method, _ in server.requests] == ["GET"]


def test_a_throttled_answer_is_retried_after_retry_after(tmp_path: Path, server: GitLabServer) -> None:
    ws = _workspace(tmp_path, server)
    server.throttle(429, 1, retry_after="0")
    assert sync(ws).errors == []
    assert server.variable("groups", "team", "registry_token") is not None
    assert len(server.requests) == 5  # two GETs and two POSTs, one GET twice


def test_url_and_token_come_from_the_environment_when_the_provider_names_none(
    tmp_path: Path, server: GitLabServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITLAB_URL", server.url)
    monkeypatch.setenv("GITLAB_TOKEN", server.token)
    ws = workspace(tmp_path, {"gl": {"kind": "gitlab"}},
                   secret("token", target("gl", "gitlab_variable", project=server.owners["projects"]["team/app"])))
    assert sync(ws).errors == []
    assert server.variable("projects", "team/app", "token") is not None


def test_dry_run_sends_no_request(tmp_path: Path, server: GitLabServer) -> None:
    assert sync(_workspace(tmp_path, server), dry_run=True).secrets_generated == ["db_password", "registry_token"]
    assert server.requests == []


def test_a_verify_setting_that_is_neither_a_flag_nor_a_path_fails_the_target(
    tmp_path: Path, server: GitLabServer
) -> None:
    provider = {**gitlab_provider(server.url), "config": {"url": server.url, "verify": 0}}
    ws = workspace(tmp_path, {"gl": provider}, secret("token", target("gl", "gitlab_variable", project="team/app")))
    [error] = sync(ws).errors
    assert error.message == "provider 'gl': verify must be true, false or a CA bundle path"
    assert server.requests == []
