"""Definitions naming the server's files (issue 25, point 2): a provider's ``token_file``,
``kubeconfig``, ``ca_cert`` or CA bundle is confined like a local target (inside
SERVICE_TARGET_ROOTS, never the data folder or /proc), so a definition cannot send a server
file to an address of its choosing. Refusals say nothing about what exists there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Project, definition, named_key, secret, target
from tests.peers.kubernetes_server import KubernetesServer
from tests.peers.vault_server import VaultServer

ROOTS = "SERVICE_TARGET_ROOTS"


@pytest.fixture
def vault() -> Iterator[VaultServer]:
    with VaultServer() as server:
        yield server


@pytest.fixture
def data_dir(project: Project, settings: Any) -> Path:
    """The service's data folder inside the definition's folder, as in a checkout run in place."""
    folder = project.root / "data"
    folder.mkdir()
    (folder / "secret_key").write_text("django-secret-key-value\n")
    settings.DATA_DIR = folder
    return folder


def _vault_sync(api: APIClient, project: Project, vault: VaultServer, token_file: str) -> Any:
    provider = {"kind": "vault", "auth": {"kind": "token_file", "config": {"token_file": token_file}},
                "config": {"address": vault.url}}
    project.write(definition(secret("a", target("vault", "vault_kv", path="app/a")), providers={"vault": provider}))
    response = api.post("/sync", {}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("token_file", ["/proc/self/environ", "data/secret_key", "../outside/token"])
def test_a_token_file_outside_the_roots_or_in_the_data_folder_sends_nothing(
    authed_api: APIClient, project: Project, vault: VaultServer, data_dir: Path, token_file: str
) -> None:
    result = _vault_sync(authed_api, project, vault, token_file)
    assert vault.requests == []
    (error,) = result["errors"]
    assert ROOTS in error["message"]
    assert error["message"].startswith("provider 'vault': token_file: path ")


def test_a_link_inside_the_roots_to_proc_is_refused(
    authed_api: APIClient, project: Project, vault: VaultServer
) -> None:
    (project.root / "token").symlink_to("/proc/self/environ")
    result = _vault_sync(authed_api, project, vault, "token")
    assert vault.requests == []
    assert ROOTS in result["errors"][0]["message"]


def test_proc_is_refused_even_when_the_roots_hold_everything(
    authed_api: APIClient, project: Project, vault: VaultServer, settings: Any
) -> None:
    settings.SERVICE_TARGET_ROOTS = (Path("/"),)
    result = _vault_sync(authed_api, project, vault, "/proc/self/environ")
    assert vault.requests == []
    assert ROOTS in result["errors"][0]["message"]


def test_the_refusal_is_the_same_for_a_file_that_exists_and_one_that_does_not(
    authed_api: APIClient, project: Project, vault: VaultServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "exists").write_text("{}")
    messages = [_vault_sync(authed_api, project, vault, str(elsewhere / name))["errors"][0]["message"]
                for name in ("exists", "missing")]
    assert messages[0].replace("exists", "X") == messages[1].replace("missing", "X")


def test_a_token_file_inside_the_roots_still_works(
    authed_api: APIClient, project: Project, vault: VaultServer
) -> None:
    (project.root / "vault-token").write_text(vault.token + "\n")
    result = _vault_sync(authed_api, project, vault, "vault-token")
    assert result["errors"] == [] and result["secrets_generated"] == ["a"]


def test_a_vault_ca_bundle_in_proc_is_refused(authed_api: APIClient, project: Project, vault: VaultServer) -> None:
    provider = {"kind": "vault", "auth": {"kind": "token", "config": {"token": vault.token}},
                "config": {"address": vault.url, "verify": "/proc/self/environ"}}
    project.write(definition(secret("a", target("vault", "vault_kv", path="app/a")), providers={"vault": provider}))
    error = authed_api.post("/sync", {}, format="json").json()["errors"][0]
    assert vault.requests == []
    assert error["message"].startswith("provider 'vault': verify: path /proc/self/environ ")


@pytest.mark.server
@pytest.mark.parametrize(("field", "config"), [
    ("kubeconfig", {"kubeconfig": "/proc/self/environ"}),
    ("kubeconfig", {"kubeconfig": "kube.yml:/proc/self/environ"}),
    ("token_file", {"host": "URL", "token_file": "/proc/self/environ"}),
    ("ca_cert", {"host": "URL", "token": "t", "ca_cert": "data/secret_key"}),
])
def test_kubernetes_files_outside_the_roots_send_nothing(
    authed_api: APIClient, project: Project, data_dir: Path, field: str, config: dict[str, str]
) -> None:
    with KubernetesServer() as kube:
        (project.root / "kube.yml").write_text("apiVersion: v1\nkind: Config\nclusters: []\n")
        settings = {k: (kube.url if v == "URL" else v) for k, v in config.items()}
        provider = {"kind": "kubernetes", "config": settings}
        project.write(definition(secret("a", target("kubernetes", "kubernetes_secret", secret_name="a")),
                                 providers={"kubernetes": provider}))
        error = authed_api.post("/sync", {}, format="json").json()["errors"][0]
        assert kube.requests == []
    assert error["message"].startswith(f"provider 'kubernetes': {field}: path ")
    assert ROOTS in error["message"]


def _kubeconfig(url: str, user: dict[str, Any]) -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "test",
        "clusters": [{"name": "test", "cluster": {"server": url}}],
        "users": [{"name": "tester", "user": user}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "tester"}}],
    })


def _kube_sync(api: APIClient, project: Project, kube: KubernetesServer, user: dict[str, Any]) -> Any:
    (project.root / "kube.yml").write_text(_kubeconfig(kube.url, user))
    provider = {"kind": "kubernetes", "config": {"kubeconfig": "kube.yml"}}
    project.write(definition(secret("a", target("k8s", "kubernetes_secret", secret_name="a")),
                             providers={"k8s": provider}))
    return api.post("/sync", {}, format="json").json()


@pytest.mark.server
@pytest.mark.parametrize("user", [{"tokenFile": "/proc/self/environ"}, {"tokenFile": "data/secret_key"},
                                  {"client-certificate": "/proc/self/environ", "client-key": "/proc/self/environ"}])
def test_files_a_named_kubeconfig_lists_are_confined_too(
    authed_api: APIClient, project: Project, data_dir: Path, user: dict[str, str]
) -> None:
    with KubernetesServer() as kube:
        result = _kube_sync(authed_api, project, kube, user)
        assert kube.requests == []
    (error,) = result["errors"]
    assert error["message"].startswith("provider 'k8s': kubeconfig ")
    assert ROOTS in error["message"]


@pytest.mark.server
def test_a_named_kubeconfig_runs_no_command_unless_scripts_are_allowed(
    authed_api: APIClient, project: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    ran = tmp_path_factory.mktemp("ran") / "ran"
    command = {"apiVersion": "client.authentication.k8s.io/v1", "command": "touch", "args": [str(ran)]}
    with KubernetesServer() as kube:
        result = _kube_sync(authed_api, project, kube, {"exec": command})
        assert kube.requests == []
    assert "SERVICE_ALLOW_SCRIPTS" in result["errors"][0]["message"]
    assert not ran.exists()


@pytest.mark.server
def test_a_token_file_a_named_kubeconfig_lists_in_the_folder_still_works(
    authed_api: APIClient, project: Project
) -> None:
    with KubernetesServer() as kube:
        (project.root / "kube-token").write_text(kube.token)
        result = _kube_sync(authed_api, project, kube, {"tokenFile": "kube-token"})
        assert result["errors"] == [] and kube.secret("default", "a") is not None


@pytest.mark.parametrize("field", ["template_path", "output_path"])
def test_a_local_template_never_reads_or_writes_the_data_folder(
    authed_api: APIClient, project: Project, data_dir: Path, field: str
) -> None:
    (project.root / "app.j2").write_text("{{ secrets.a }}\n")
    config = {"template_path": "app.j2", "output_path": "out/app.txt", field: "data/secret_key"}
    project.write(definition({"name": "a", "kind": "random_password",
                              "targets": [{"provider": "local", "kind": "template", "config": config}]}))
    (error,) = authed_api.post("/sync", {}, format="json").json()["errors"]
    assert ROOTS in error["message"]
    assert (data_dir / "secret_key").read_text() == "django-secret-key-value\n"
    assert not (project.root / "out").exists()


def test_a_local_file_never_writes_the_data_folder(authed_api: APIClient, project: Project, data_dir: Path) -> None:
    project.write(definition(secret("a", target("local", "file", path="data/secret_key", format="dotenv"))))
    (error,) = authed_api.post("/sync", {}, format="json").json()["errors"]
    assert ROOTS in error["message"]
    assert (data_dir / "secret_key").read_text() == "django-secret-key-value\n"


def test_validation_reports_a_provider_file_in_proc(db: None, api_key: str) -> None:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=named_key("reader", "read"))
    provider = {"kind": "vault", "auth": {"kind": "token_file", "config": {"token_file": "/proc/self/environ"}},
                "config": {"address": "http://127.0.0.1:9"}}
    doc = definition(secret("a", target("vault", "vault_kv", path="app/a")), providers={"vault": provider})
    report = client.post("/config/validate", {"config": doc}, format="json").json()
    assert report["valid"] is False
    assert [e for e in report["errors"] if ROOTS in e] == [
        "secrets[0] 'a' targets[0] vault/vault_kv: provider 'vault': token_file: path /proc/self/environ is outside "
        "the allowed target roots (SERVICE_TARGET_ROOTS) or among the service's own files"
    ]


@pytest.mark.server
def test_a_listed_file_swapped_for_a_link_after_a_sync_is_checked_again(
    authed_api: APIClient, project: Project
) -> None:
    with KubernetesServer() as kube:
        (project.root / "kube-token").write_text(kube.token)
        assert _kube_sync(authed_api, project, kube, {"tokenFile": "kube-token"})["errors"] == []
        (project.root / "kube-token").unlink()
        (project.root / "kube-token").symlink_to("/proc/self/environ")
        seen = len(kube.requests)
        result = authed_api.post("/sync", {"force": True}, format="json").json()
        assert len(kube.requests) == seen
    assert ROOTS in result["errors"][0]["message"]
