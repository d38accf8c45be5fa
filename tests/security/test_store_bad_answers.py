"""A store's bad answer is that target's error (issue 36, point 8).

A GitHub scope answering an all-zero public key made PyNaCl raise in the middle of a sync that had
already written Vault and Vercel: the whole sync answered 500, and neither the lockfile nor the
audit row recorded those writes. Whatever a kind raises, the sync goes on with the other targets,
answers 200 with that target's error (naming the exception's class, never its text, which can
quote a value), and records every target it wrote in the lockfile and the audit row.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from secretsapi.service.targets import vault_kv
from tests.factories import Project, definition, secret, target, vault_provider, vercel_provider
from tests.peers.github_server import GitHubServer
from tests.peers.vault_server import VaultServer
from tests.peers.vercel_server import VercelServer
from tests.service.targets.conftest import clean_sdk_env, vault, vercel  # noqa: F401 (fixtures)


class ZeroKeyGitHub(GitHubServer):
    """GitHub answering the scope's public key with 32 zero bytes (a point libsodium refuses)."""

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> Any:
        if path.endswith("/public-key"):
            return 200, {"key_id": self.key_id, "key": base64.b64encode(bytes(32)).decode()}
        return super().handle(method, path, query, headers, body)


@pytest.fixture
def zero_key_github(clean_sdk_env: None) -> Iterator[ZeroKeyGitHub]:  # noqa: F811
    with ZeroKeyGitHub() as server:
        server.add_repo("acme", "api")
        yield server


def _project(project: Project, vault: VaultServer, vercel: VercelServer, github: GitHubServer) -> Project:  # noqa: F811
    providers = {"vault": vault_provider(vault.url), "vercel": vercel_provider(vercel),
                 "github": {"kind": "github", "auth": {"kind": "token", "config": {"token": github.token}},
                            "config": {"api_url": github.url}}}
    return project.write(definition(
        secret("db", target("vault", "vault_kv", path="app/db"), target("local", "file", path="out/app.env")),
        secret("api", target("vercel", "vercel_env", secret_name="API")),
        secret("gh", target("github", "github_secret", owner="acme", repo="api", secret_name="GH"),
               target("local", "file", path="out/app.env")),
        providers=providers))


def _last_sync_row() -> AuditEntry:
    return AuditEntry.objects.filter(action="sync").order_by("-id").first()  # type: ignore[return-value]


def _assert_the_others_are_recorded(project: Project, result: dict[str, Any], failed_target: str) -> None:
    (error,) = result["errors"]
    assert (error["secret"], error["target"]) == ("gh" if "github" in failed_target else "db", failed_target)
    lock = project.lock()["secrets"]
    assert "vercel/vercel_env/" in lock["api"]["targets"]
    assert "local/file/out/app.env" in lock["gh"]["targets"]
    row = _last_sync_row()
    assert row.success is False
    # Every secret written (each target of db and api), and of the one a target failed for, the
    # targets that did take its value.
    assert row.details["generated"] == ["db", "api", "gh"]
    assert row.details["errors"] == result["errors"]
    failed_secret = result["errors"][0]["secret"]
    assert row.details["written_targets"] == {
        failed_secret: list(project.lock()["secrets"][failed_secret]["targets"])}


def test_an_all_zero_github_key_fails_that_target_and_the_sync_records_the_others(
    authed_api: APIClient, project: Project, vault: VaultServer, vercel: VercelServer,  # noqa: F811
    zero_key_github: ZeroKeyGitHub,
) -> None:
    _project(project, vault, vercel, zero_key_github)

    response = authed_api.post("/sync", {}, format="json")

    assert response.status_code == 200, response.content
    result = response.json()
    _assert_the_others_are_recorded(project, result, "github/github_secret/")
    assert "public key" in result["errors"][0]["message"]
    assert zero_key_github.secrets == {}
    assert vault.data("secret", "app/db")
    assert "vault/vault_kv/secret/app/db" in project.lock()["secrets"]["db"]["targets"]


def test_any_exception_a_kind_raises_mid_sync_is_that_targets_error_without_its_text(
    authed_api: APIClient, project: Project, vault: VaultServer, vercel: VercelServer,  # noqa: F811
    zero_key_github: ZeroKeyGitHub, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    quoted = "-".join(("text", "that", "could", "be", "a", "value"))  # built at run time: in no source line

    def broken(*args: Any) -> Any:
        raise KeyError(quoted)

    monkeypatch.setattr(vault_kv.VaultKvKind, "_client", broken)
    zero_key_github.handle = GitHubServer.handle.__get__(zero_key_github)  # type: ignore[method-assign]
    _project(project, vault, vercel, zero_key_github)

    response = authed_api.post("/sync", {}, format="json")

    assert response.status_code == 200, response.content
    result = response.json()
    _assert_the_others_are_recorded(project, result, "vault/vault_kv/secret/app/db")
    assert "KeyError" in result["errors"][0]["message"]
    assert "text-that-could-be-a-value" not in str(result) + str(_last_sync_row().details) + caplog.text
    assert "vault/vault_kv failed unexpectedly (KeyError)" in caplog.text  # the operator can find where
    assert "github/github_secret/" in project.lock()["secrets"]["gh"]["targets"]
