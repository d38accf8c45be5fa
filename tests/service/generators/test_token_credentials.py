"""Whose credential creates a token: the definition's own (any project), or the server's
GITLAB_TOKEN, which mints tokens only for projects the operator lists in SERVICE_PROVIDER_READ
and goes only to an address the operator allows (a definition is untrusted input)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from secretsapi.service.definition.egress import egress_of
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import target, workspace
from tests.peers.gitlab_tokens_server import GitLabTokenServer


def _workspace(tmp_path: Path, url: str, reads: dict[str, str] | None, project: str = "team/app") -> Workspace:
    provider = {"kind": "gitlab", "config": {"url": url}}  # no token: the server's GITLAB_TOKEN
    secret = {"name": "deploy", "kind": "gitlab_project_token",
              "config": {"project": project, "token_name": "deploy", "scopes": ["read_repository"]},
              "targets": [target("local", "file", path="out/deploy.env", format="dotenv")]}
    ws = workspace(tmp_path, {"gitlab": provider}, secret)
    return dataclasses.replace(ws, egress=egress_of({"gitlab": [url]}, reads))


@pytest.fixture
def server_token(monkeypatch: pytest.MonkeyPatch, gitlab: GitLabTokenServer) -> GitLabTokenServer:
    monkeypatch.setenv("GITLAB_TOKEN", gitlab.token)
    return gitlab


def test_the_servers_token_mints_nothing_for_a_project_the_operator_does_not_list(
    tmp_path: Path, server_token: GitLabTokenServer
) -> None:
    result = sync(_workspace(tmp_path, server_token.url, {}))
    assert result.secrets_failed == ["deploy"]
    assert "SERVICE_PROVIDER_READ" in result.errors[0].message
    assert server_token.tokens == {}


def test_the_servers_token_mints_for_a_project_under_a_listed_prefix(
    tmp_path: Path, server_token: GitLabTokenServer
) -> None:
    ws = _workspace(tmp_path, server_token.url, {"gitlab/gitlab_project_token": "team/"})
    assert sync(ws).errors == []
    assert len(server_token.tokens) == 1


def test_the_servers_token_never_goes_to_an_address_the_operator_does_not_allow(
    tmp_path: Path, server_token: GitLabTokenServer
) -> None:
    ws = dataclasses.replace(_workspace(tmp_path, server_token.url, {"gitlab/gitlab_project_token": "team/"}),
                             egress=egress_of({}, {"gitlab/gitlab_project_token": "team/"}))
    result = sync(ws)
    assert result.secrets_failed == ["deploy"] and "SERVICE_CREDENTIAL_ADDRESSES" in result.errors[0].message
    assert server_token.requests == []


def test_the_definitions_own_token_is_not_limited_by_the_operators_list(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    provider = {"kind": "gitlab", "auth": {"kind": "token", "config": {"token": gitlab.token}},
                "config": {"url": gitlab.url}}
    secret = {"name": "deploy", "kind": "gitlab_project_token",
              "config": {"project": "team/app", "token_name": "deploy", "scopes": ["read_repository"]},
              "targets": [target("local", "file", path="out/deploy.env", format="dotenv")]}
    ws = dataclasses.replace(workspace(tmp_path, {"gitlab": provider}, secret), egress=egress_of({}, {}))
    assert sync(ws).errors == []


def test_the_servers_token_never_revokes_a_token_a_lockfile_names_outside_the_listed_projects(
    tmp_path: Path, server_token: GitLabTokenServer
) -> None:
    """The lockfile comes with the definition: an entry listing another team's token as superseded
    must not make the server's token revoke it."""
    server_token.add("projects", "other/app")
    theirs = server_token.add_token("projects", "other/app", "their-deploy")
    ws = _workspace(tmp_path, server_token.url, {"gitlab/gitlab_project_token": "team/"})
    sync(ws)
    lock = json.loads(ws.lockfile_path.read_text())
    lock["secrets"]["deploy"]["superseded_tokens"] = [
        {"kind": "gitlab_project_token", "provider": "gitlab", "owner": "other/app", "id": theirs, "name": "x"}]
    ws.lockfile_path.write_text(json.dumps(lock))
    result = sync(ws)
    assert any("SERVICE_PROVIDER_READ" in e.message for e in result.errors)
    assert server_token.tokens[theirs]["revoked"] is False
