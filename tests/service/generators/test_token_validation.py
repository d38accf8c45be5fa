"""Token kinds' options are checked as SecretZero checks them: when the token is created. A
definition SecretZero validates stays valid here; a bad option is a warning naming it, and only
its secret fails at sync, before any request to the vendor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from secretsapi.service.sync import sync
from secretsapi.service.validate import validate_file
from tests.factories import target, workspace
from tests.peers.gitlab_tokens_server import GitLabTokenServer
from tests.service.generators.test_gitlab_project_token import gitlab_provider


def _secrets() -> list[dict[str, Any]]:
    bad = {"name": "bad_token", "kind": "gitlab_project_token",
           "config": {"project": "team/app", "token_name": "x", "scopes": ["bogus_scope"]},
           "targets": [target("local", "file", path="out/bad.env", format="dotenv")]}
    good = {"name": "plain", "kind": "random_password", "targets": [target("local", "file", path="out/p.env")]}
    return [bad, good]


def test_a_bad_token_option_is_a_warning_and_the_definition_stays_valid(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    ws = workspace(tmp_path, {"gitlab": gitlab_provider(gitlab.url)}, *_secrets())
    report = validate_file(ws.definition_path)
    assert report.valid and report.errors == []
    assert ("secrets[0].config.scopes: unknown scopes: bogus_scope: secret 'bad_token' will fail at sync"
            in report.warnings)


def test_a_bad_token_option_fails_only_its_secret_without_calling_the_vendor(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    result = sync(workspace(tmp_path, {"gitlab": gitlab_provider(gitlab.url)}, *_secrets()))
    assert result.secrets_generated == ["plain"] and result.secrets_failed == ["bad_token"]
    assert "unknown scopes: bogus_scope" in result.errors[0].message
    assert gitlab.requests == []


def test_a_membership_role_gitlab_does_not_have_is_a_warning_naming_the_roles(tmp_path: Path) -> None:
    secret = {"name": "bot", "kind": "gitlab_group_service_account",
              "config": {"group": "team", "service_account_name": "bot", "token_name": "bot", "scopes": ["api"],
                         "memberships": [{"resource_type": "project", "resource": "team/app", "access_level": "dev"}]},
              "targets": [target("local", "file", path="out/bot.env")]}
    report = validate_file(workspace(tmp_path, {}, secret).definition_path)
    assert report.valid
    assert any("config.memberships" in w and "one of 10, 15, 20, 30, 40, 50" in w for w in report.warnings)
