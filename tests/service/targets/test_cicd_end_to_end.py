"""One definition over a dotenv file, GitHub Actions secrets, GitLab variables and Jenkins
credentials, driven through the HTTP API and the management commands against their peers:
sync, rotation, drift (unverifiable where the store is write-only), repair, dry run, discovery,
validation, throttling, and tokens never shown."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from audit.models import AuditEntry
from secretsapi.service.drift import detect_drift
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import aws_provider, kube_provider, lock_entries, secret, target, vault_provider, workspace
from tests.peers.github_server import GitHubServer
from tests.peers.gitlab_server import GitLabServer
from tests.peers.jenkins_server import JenkinsServer
from tests.peers.kubernetes_server import KubernetesServer
from tests.peers.vault_server import VaultServer

TOKENS = ("ghp-test-token", "glpat-test-token", "jenkins-api-token")
IDS = {  # SecretZero's ids: none of these targets has a `name`, so each ends at its kind
    "gh_token": "github/github_secret/",
    "gl_token": "gitlab/gitlab_variable/",
    "jk_token": "jenkins/jenkins_credential/",
}


def _providers(github: GitHubServer, gitlab: GitLabServer, jenkins: JenkinsServer) -> dict[str, Any]:
    return {
        "github": {"kind": "github", "auth": {"kind": "token", "config": {"token": TOKENS[0]}},
                   "config": {"api_url": github.url, "max_concurrency": 2}},
        "gitlab": {"kind": "gitlab", "auth": {"kind": "token", "config": {"token": TOKENS[1]}},
                   "config": {"url": gitlab.url}},
        "jenkins": {"kind": "jenkins", "auth": {"kind": "token", "config": {
            "url": jenkins.url, "username": "admin", "token": TOKENS[2]}}},
    }


@pytest.fixture
def stores(github: GitHubServer, gitlab: GitLabServer, jenkins: JenkinsServer) -> tuple[Any, Any, Any]:
    github.add_repo("acme", "api")
    gitlab.add("projects", "team/app")
    return github, gitlab, jenkins


@pytest.fixture
def cicd(tmp_path: Path, settings: Any, stores: tuple[GitHubServer, GitLabServer, JenkinsServer]) -> Workspace:
    ws = workspace(
        tmp_path, _providers(*stores),
        secret("gh_token", target("local", "file", path="out/ci.env"),
               target("github", "github_secret", owner="acme", repo="api", secret_name="DEPLOY_TOKEN")),
        secret("gl_token", target("local", "file", path="out/ci.env"),
               target("gitlab", "gitlab_variable", project="team/app", key="DEPLOY_TOKEN")),
        secret("jk_token", target("local", "file", path="out/ci.env"),
               target("jenkins", "jenkins_credential", credential_id="deploy-token")),
    )
    settings.SERVICE_CONFIG = ws.definition_path
    settings.SERVICE_LOCKFILE = None
    return ws


def _stored(github: GitHubServer, gitlab: GitLabServer, jenkins: JenkinsServer) -> dict[str, str | None]:
    variable = gitlab.variable("projects", "team/app", "DEPLOY_TOKEN")
    return {"gh_token": github.value("repos/acme/api", "DEPLOY_TOKEN"),
            "gl_token": variable["value"] if variable else None,
            "jk_token": jenkins.secret("deploy-token")}


def _reasons(body: dict[str, Any]) -> set[tuple[str, str]]:
    return {(d["secret"], d["details"]["reason"]) for d in body["details"]}


def test_api_syncs_rotates_drifts_and_repairs_in_every_store(
    authed_api: APIClient, cicd: Workspace, stores: tuple[GitHubServer, GitLabServer, JenkinsServer]
) -> None:
    github, gitlab, jenkins = stores
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["errors"] == [] and sorted(body["secrets_generated"]) == sorted(IDS)
    first = _stored(*stores)
    lock = lock_entries(cicd)
    for name, target_id in IDS.items():
        assert lock[name]["targets"][target_id] == sha256_text(first[name] or ""), name

    drift = authed_api.post("/drift/check", {}, format="json").json()
    assert drift["has_drift"] is False
    assert _reasons(drift) == {("gh_token", "unverifiable"), ("jk_token", "unverifiable")}

    rotated = authed_api.post("/rotation/execute", {"force": True}, format="json").json()
    assert sorted(rotated["rotated"]) == sorted(IDS) and rotated["errors"] == []
    second = _stored(*stores)
    assert all(second[name] != first[name] for name in IDS)

    github.overwrite("repos/acme/api", "DEPLOY_TOKEN", "by hand", at=datetime.now(UTC) + timedelta(minutes=1))
    gitlab.set_value("projects", "team/app", "DEPLOY_TOKEN", "edited-in-the-ui")
    jenkins.delete("deploy-token")
    drift = authed_api.post("/drift/check", {}, format="json").json()
    assert drift["has_drift"] is True and sorted(drift["secrets_with_drift"]) == sorted(IDS)
    assert _reasons(drift) == {("gh_token", "unverifiable"), ("gl_token", "value_changed"),
                               ("jk_token", "target_missing")}

    repaired = authed_api.post("/sync", {"repair": True}, format="json").json()
    assert sorted(repaired["secrets_repaired"]) == sorted(IDS) and repaired["errors"] == []
    assert _stored(*stores) == second
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False


def test_api_dry_runs_touch_no_store(
    authed_api: APIClient, cicd: Workspace, stores: tuple[GitHubServer, GitLabServer, JenkinsServer]
) -> None:
    body = authed_api.post("/sync", {"dry_run": True}, format="json").json()
    assert sorted(body["secrets_generated"]) == sorted(IDS)
    assert all(store.requests == [] for store in stores)
    assert not cicd.lockfile_path.exists()


def test_commands_sync_rotate_detect_drift_and_repair(
    cicd: Workspace, db: None, stores: tuple[GitHubServer, GitLabServer, JenkinsServer]
) -> None:
    github = stores[0]

    def run(*args: str) -> int:
        try:
            call_command(*args, stdout=StringIO())
        except CommandError as exc:
            return exc.returncode
        return 0

    assert run("sync") == 0
    first = _stored(*stores)
    assert run("rotate", "--force") == 0
    assert all(_stored(*stores)[name] != first[name] for name in IDS)
    assert run("drift") == 0  # write-only targets are unverifiable, not drift
    github.overwrite("repos/acme/api", "DEPLOY_TOKEN", "by hand", at=datetime.now(UTC) + timedelta(minutes=1))
    assert run("drift") == 2
    assert run("sync", "--repair") == 0
    assert run("drift") == 0


def test_targets_list_the_kinds_with_their_config_keys(authed_api: APIClient, cicd: Workspace) -> None:
    targets = {t["type"]: {o["name"] for o in t["config"]} for t in authed_api.get("/targets").json()["targets"]}
    assert {"owner", "repo", "environment", "org", "visibility", "selected_repository_ids",
            "secret_name"} <= targets["github/github_secret"]
    assert {"project", "key", "masked", "protected", "raw", "environment_scope"} <= targets["gitlab/gitlab_variable"]
    assert {"group", "key", "masked"} <= targets["gitlab/gitlab_group_variable"]
    assert {"credential_id", "folder", "domain", "description"} <= targets["jenkins/jenkins_credential"]


def test_providers_show_the_declared_stores_without_their_tokens(authed_api: APIClient, cicd: Workspace) -> None:
    response = authed_api.get("/providers")
    body = response.json()
    offered = {p["kind"]: p["targets"] for p in body["providers"]}
    assert offered["gitlab"] == ["gitlab/gitlab_group_variable", "gitlab/gitlab_variable"]
    declared = {p["alias"]: p for p in body["declared"]}
    assert declared["jenkins"]["auth_keys"] == ["token", "url", "username"]
    assert all(token.encode() not in response.content for token in TOKENS)


def test_validation_names_the_secret_and_the_target_of_each_config_error(
    authed_api: APIClient, cicd: Workspace
) -> None:
    config = {"version": "1.0", "secrets": [
        secret("a", target("github", "github_secret", owner="acme")),
        secret("b", target("github", "github_secret", org="acme", visibility="public")),
        secret("c", target("gitlab", "gitlab_variable", masked="yes")),
        secret("d", target("jenkins", "jenkins_credential", credential_type="username_password",
                           credential_id="x")),
    ]}
    body = authed_api.post("/config/validate", {"config": config}, format="json").json()
    assert body["valid"] is False
    assert body["errors"] == [
        "secrets[0] 'a' targets[0] github/github_secret: config.repo is required",
        "secrets[1] 'b' targets[0] github/github_secret: config.visibility 'public' is not one of all, private, "
        "selected",
        "secrets[2] 'c' targets[0] gitlab/gitlab_variable: config.project is required",
        "secrets[2] 'c' targets[0] gitlab/gitlab_variable: config.masked must be true or false",
        "secrets[3] 'd' targets[0] jenkins/jenkins_credential: config.username is required",
    ]


def test_a_throttled_store_is_retried_and_no_token_reaches_the_lockfile_audit_or_logs(
    authed_api: APIClient, cicd: Workspace, stores: tuple[GitHubServer, GitLabServer, JenkinsServer],
    caplog: pytest.LogCaptureFixture,
) -> None:
    github, gitlab, jenkins = stores
    github.throttle(429, 1, retry_after="0")
    gitlab.throttle(429, 1, retry_after="0")
    jenkins.throttle(503, 1, retry_after="0")
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["errors"] == [] and sorted(body["secrets_generated"]) == sorted(IDS)
    details = json.dumps(list(AuditEntry.objects.values_list("details", flat=True)))
    for text in (cicd.lockfile_path.read_text(), details, caplog.text):
        assert not any(token in text for token in TOKENS)
        assert not any(value and value in text for value in _stored(*stores).values())


@pytest.mark.parametrize(("module", "package", "spec"), [
    ("nacl.public", "pynacl", target("github", "github_secret", owner="acme", repo="api")),
    ("requests", "requests", target("github", "github_secret", owner="acme", repo="api")),
    ("requests", "requests", target("gitlab", "gitlab_variable", project="team/app")),
    ("requests", "requests", target("jenkins", "jenkins_credential", credential_id="x")),
])
def test_a_missing_library_fails_the_target_naming_the_package_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stores: tuple[GitHubServer, GitLabServer, JenkinsServer],
    module: str, package: str, spec: dict[str, Any],
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    ws = workspace(tmp_path, _providers(*stores), secret("a", spec))
    (error,) = sync(ws).errors
    type_ = f"{spec['provider']}/{spec['kind']}"
    assert error.message == f"install the '{package}' package to use {type_} targets"
    assert all(store.requests == [] for store in stores)


def test_one_sync_writes_every_store_with_the_existing_kinds_and_records_every_target(
    tmp_path: Path, stores: tuple[GitHubServer, GitLabServer, JenkinsServer], aws: str, vault: VaultServer,
    kube: KubernetesServer,
) -> None:
    providers = {**_providers(*stores), "aws": aws_provider(aws), "vault": vault_provider(vault.url),
                 "cluster": kube_provider(kube.url)}
    targets = [
        target("local", "file", path="out/all.env"),
        target("aws", "ssm_parameter", name="/app/shared"),
        target("vault", "vault_kv", path="app/shared"),
        target("cluster", "kubernetes_secret", secret_name="shared", namespace="apps"),
        target("github", "github_secret", owner="acme", repo="api"),
        target("gitlab", "gitlab_variable", project="team/app"),
        target("gitlab", "gitlab_group_variable", group="team"),
        target("jenkins", "jenkins_credential", credential_id="shared"),
    ]
    stores[1].add("groups", "team")
    ws = workspace(tmp_path, providers, secret("shared", *targets))
    result = sync(ws)
    assert result.errors == [] and result.secrets_generated == ["shared"]
    entry = lock_entries(ws)["shared"]
    assert list(entry["targets"]) == [
        "local/file/out/all.env", "aws/ssm_parameter//app/shared", "vault/vault_kv/secret/app/shared",
        "cluster/kubernetes_secret/apps/shared/shared", "github/github_secret/",
        "gitlab/gitlab_variable/", "gitlab/gitlab_group_variable/", "jenkins/jenkins_credential/"]
    assert set(entry["targets"].values()) == {entry["hash"]}
    github, gitlab, jenkins = stores
    assert sha256_text(github.value("repos/acme/api", "shared") or "") == entry["hash"]
    assert sha256_text((gitlab.variable("groups", "team", "shared") or {})["value"]) == entry["hash"]
    assert sha256_text(jenkins.secret("shared") or "") == entry["hash"]
    assert not detect_drift(ws).has_drift  # the GitHub secret's write time is recorded once written
