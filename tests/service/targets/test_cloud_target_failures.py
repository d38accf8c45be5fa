"""Remote targets when things go wrong: unreachable or stalled stores, rejected credentials,
a missing SDK, conflicting placements; each a clear per-target error without values."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.definition.model import Placement, ProviderSpec, TargetSpec
from secretsapi.service.drift import detect_drift
from secretsapi.service.errors import TargetError
from secretsapi.service.sync import sync
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.aws import aws_client
from tests.factories import aws_provider, boto, kube_provider, secret, target, vault_provider, workspace
from tests.peers.http_peer import Peer
from tests.peers.kubernetes_server import KubernetesServer
from tests.peers.vault_server import VaultServer
from tests.processes.live import free_port


class StalledServer(Peer):
    """Accepts connections and answers nothing useful, late: a store that hangs."""

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        return 503, {"errors": ["late"]}


def _closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there once the probe socket closed


def _values(ws_folder: Path) -> list[str]:
    text = (ws_folder / "out" / "app.env").read_text()
    return [line.split("=", 1)[1].strip().strip('"') for line in text.splitlines() if "=" in line]


def test_one_unreachable_store_leaves_the_other_targets_written_and_recorded(
    tmp_path: Path, aws: str
) -> None:
    providers = {"aws": aws_provider(aws), "vault": vault_provider(_closed_url(), timeout=2)}
    ws = workspace(tmp_path, providers, secret(
        "db_password",
        target("local", "file", path="out/app.env"),
        target("aws", "ssm_parameter", name="/app/db"),
        target("vault", "vault_kv", path="app/db"),
    ))

    result = sync(ws)

    assert result.secrets_generated == ["db_password"] and result.secrets_failed == []
    assert [(e.secret, e.target) for e in result.errors] == [("db_password", "vault/vault_kv/secret/app/db")]
    assert result.errors[0].message == "vault/vault_kv/secret/app/db: cannot reach the endpoint (connection refused)"
    (value,) = _values(tmp_path)
    assert value not in result.errors[0].message
    stored = boto("ssm", aws).get_parameter(Name="/app/db", WithDecryption=True)["Parameter"]["Value"]
    assert stored == value
    entry = json.loads(ws.lockfile_path.read_text())["secrets"]["db_password"]
    assert set(entry["targets"]) == {"local/file/out/app.env", "aws/ssm_parameter//app/db"}
    reasons = {i.details["target"]: i.details["reason"] for i in detect_drift(ws).details}
    assert reasons == {"vault/vault_kv/secret/app/db": "untracked_target"}


def test_drift_reports_an_unreachable_store_as_unreadable(tmp_path: Path, vault: VaultServer) -> None:
    ws = workspace(tmp_path, {"vault": vault_provider(vault.url)},
                   secret("a", target("vault", "vault_kv", path="app")))
    sync(ws)
    ws = workspace(tmp_path, {"vault": vault_provider(_closed_url())},
                   secret("a", target("vault", "vault_kv", path="app")))
    (item,) = detect_drift(ws).details
    assert item.details["reason"] == "target_unreadable"
    assert "cannot reach the endpoint" in item.details["problem"]


@pytest.mark.server
def test_a_stalled_store_fails_with_a_timeout_instead_of_hanging(tmp_path: Path, clean_sdk_env: None) -> None:
    with StalledServer() as stalled:
        stalled.delay = 8  # longer than every timeout below; released when the server stops
        providers = {
            "aws": aws_provider(stalled.url, timeout=0.5),
            "vault": vault_provider(stalled.url, timeout=0.5),
            "k8s": kube_provider(stalled.url, timeout=0.5),
        }
        ws = workspace(tmp_path, providers,
                       secret("a", target("aws", "ssm_parameter", name="a")),
                       secret("b", target("vault", "vault_kv", path="b")),
                       secret("c", target("k8s", "kubernetes_secret", secret_name="c")))
        started = time.monotonic()
        result = sync(ws)
        elapsed = time.monotonic() - started
    assert elapsed < 10
    assert sorted(result.secrets_failed) == ["a", "b", "c"]
    assert {e.target: e.message for e in result.errors} == {
        "aws/ssm_parameter/a": "aws/ssm_parameter/a: cannot reach the endpoint (timeout)",
        "vault/vault_kv/secret/b": "vault/vault_kv/secret/b: cannot reach the endpoint (timeout)",
        "k8s/kubernetes_secret/default/c/c": "k8s/kubernetes_secret/default/c: cannot reach the endpoint (timeout)",
    }
    assert not ws.lockfile_path.exists() or json.loads(ws.lockfile_path.read_text())["secrets"] == {}


def test_rejected_credentials_are_reported_per_target(
    tmp_path: Path, vault: VaultServer, kube: KubernetesServer
) -> None:
    providers = {"vault": vault_provider(vault.url, token="wrong-token"),
                 "k8s": kube_provider(kube.url, token="wrong-token")}
    ws = workspace(tmp_path, providers,
                   secret("a", target("vault", "vault_kv", path="a")),
                   secret("b", target("k8s", "kubernetes_secret", secret_name="b")))
    result = sync(ws)
    assert {e.target: e.message for e in result.errors} == {
        "vault/vault_kv/secret/a": "vault/vault_kv/secret/a: permission denied (403: the token is invalid or "
                                   "lacks access)",
        "k8s/kubernetes_secret/default/b/b": "k8s/kubernetes_secret/default/b: not authenticated (401)",
    }
    assert all("wrong-token" not in e.message for e in result.errors)


def test_aws_errors_name_the_error_code_only(tmp_path: Path, aws: str) -> None:
    ws = workspace(tmp_path, {"aws": aws_provider(aws)},
                   secret("a", target("aws", "ssm_parameter", name="/app/a", overwrite=False)))
    boto("ssm", aws).put_parameter(Name="/app/a", Value="someone else's", Type="String")
    (error,) = sync(ws).errors
    assert error.message == "aws/ssm_parameter//app/a: the parameter exists and config.overwrite is false"


def test_missing_credentials_say_where_to_put_them(tmp_path: Path, vault: VaultServer) -> None:
    ws = workspace(tmp_path, {"vault": {"config": {"address": vault.url}}},
                   secret("a", target("vault", "vault_kv", path="a")))
    (error,) = sync(ws).errors
    assert error.message == ("provider 'vault': no Vault token (set token or token_file in the provider's "
                             "auth, or VAULT_TOKEN)")
    (tmp_path / "vault-token").write_text(vault.token + "\n")
    ws = workspace(tmp_path, {"vault": {"auth": {"kind": "token_file", "config": {"token_file": "vault-token"}},
                                        "config": {"address": vault.url}}},
                   secret("a", target("vault", "vault_kv", path="a")))
    assert sync(ws).errors == []


@pytest.mark.parametrize(("module", "package", "type_", "spec"), [
    ("boto3", "boto3", "aws/ssm_parameter", {"name": "x"}),
    ("hvac", "hvac", "vault/vault_kv", {"path": "x"}),
    ("kubernetes.client", "kubernetes", "kubernetes/kubernetes_secret", {"secret_name": "x"}),
])
def test_a_missing_sdk_names_the_package_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_sdk_env: None,
    module: str, package: str, type_: str, spec: dict[str, Any],
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    provider, kind = type_.split("/")
    ws = workspace(tmp_path, {}, secret("a", target(provider, kind, **spec)))
    (error,) = sync(ws).errors
    assert error.message == f"install the '{package}' package to use {type_} targets"


def test_one_store_key_given_two_values_fails_that_store_only(tmp_path: Path, vault: VaultServer) -> None:
    ws = workspace(tmp_path, {"vault": vault_provider(vault.url)},
                   secret("a", target("vault", "vault_kv", path="app", key="k")),
                   secret("b", target("vault", "vault_kv", path="app", key="k")))
    result = sync(ws)
    assert {e.message for e in result.errors} == {"vault/vault_kv/secret/app: key 'k' is given two values"}
    assert vault.requests == []


def test_invalid_target_config_is_an_error_before_any_request(tmp_path: Path, kube: KubernetesServer) -> None:
    ws = workspace(tmp_path, {"kubernetes": kube_provider(kube.url)},
                   secret("a", target("kubernetes", "kubernetes_secret", secret_name="app", labels=["x"])))
    (error,) = sync(ws).errors
    assert "config.labels must be a mapping of strings to strings" in error.message
    assert kube.requests == []


def test_clients_are_cached_per_provider_settings(tmp_path: Path, clean_sdk_env: None) -> None:
    def ctx(endpoint: str) -> TargetContext:
        providers = {"aws": ProviderSpec("aws", "aws", {}, {"endpoint_url": endpoint, "region": "us-east-1"})}
        return TargetContext(tmp_path, providers, lambda key: None, ())

    spec = TargetSpec("aws", "ssm_parameter", {"name": "x"})
    first = aws_client("ssm", spec, ctx("http://127.0.0.1:1"), "aws/ssm_parameter")
    assert aws_client("ssm", spec, ctx("http://127.0.0.1:1"), "aws/ssm_parameter") is first
    assert aws_client("ssm", spec, ctx("http://127.0.0.1:2"), "aws/ssm_parameter") is not first


def test_timeouts_must_be_positive_numbers(tmp_path: Path, clean_sdk_env: None) -> None:
    providers = {"vault": ProviderSpec("vault", "vault", {}, {"address": "http://x", "token": "t",
                                                               "timeout": "soon"})}
    ctx = TargetContext(tmp_path, providers, lambda key: None, ())
    kind = get_kind("vault/vault_kv")
    with pytest.raises(TargetError, match="timeout must be a number of seconds"):
        kind.read([Placement(TargetSpec("vault", "vault_kv", {"path": "p"}), "p")], ctx)


def test_an_unknown_vault_mount_is_reported_not_created(tmp_path: Path, vault: VaultServer) -> None:
    ws = workspace(tmp_path, {"vault": vault_provider(vault.url)},
                   secret("a", target("vault", "vault_kv", path="app", mount_point="nope")))
    (error,) = sync(ws).errors
    assert error.message == "vault/vault_kv/nope/app: write failed (404: no such mount or path)"
