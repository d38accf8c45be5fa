"""Remote target calls run concurrently, a bounded pool per provider: writes still record exactly
the targets that took the new value (rule 5) and keep their locks; 429 and 503 are retried."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.definition.model import ProviderSpec, TargetSpec
from secretsapi.service.drift import detect_drift
from secretsapi.service.errors import TargetError
from secretsapi.service.sync import sync
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.fanout import Call, fan_out
from secretsapi.service.util.hashing import sha256_text
from tests.factories import (
    aws_provider,
    azure_provider,
    boto,
    kube_provider,
    lock_entries,
    secret,
    target,
    vault_provider,
    vercel_provider,
    workspace,
)
from tests.peers.azure_keyvault_server import AzureKeyVaultServer
from tests.peers.http_peer import Peer
from tests.peers.kubernetes_server import KubernetesServer
from tests.peers.vault_server import VaultServer
from tests.peers.vercel_server import VercelServer

WAIT = 30  # seconds; bounds a hang, never reached when things work


def _vault_secrets(count: int) -> list[dict[str, Any]]:
    return [secret(f"s{i}", target("vault", "vault_kv", path=f"app/s{i}")) for i in range(count)]


def _while_held(peer: Peer, in_flight: int, operation: Callable[[], Any]) -> Any:
    """``operation()``'s result, run in a thread while ``peer`` holds its answers: it must get
    ``in_flight`` requests waiting at once before the peer lets them go."""
    peer.hold()
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(operation()))
    thread.start()
    try:
        assert peer.wait_in_flight(in_flight)
    finally:
        peer.release()
        thread.join(WAIT)
    return outcome[0]


def test_a_sync_records_exactly_the_parameters_written_when_some_of_its_concurrent_writes_fail(
    tmp_path: Path, aws: str
) -> None:
    # SSM refuses names starting with "aws" (reserved): every third write fails.
    names = {f"s{i}": f"aws-s{i}" if i % 3 == 0 else f"/app/s{i}" for i in range(24)}
    secrets = [secret(name, target("aws", "ssm_parameter", name=param)) for name, param in names.items()]
    secrets.append(secret("both", target("aws", "ssm_parameter", name="aws-both"),
                          target("aws", "ssm_parameter", name="/app/both")))
    ws = workspace(tmp_path, {"aws": aws_provider(aws)}, *secrets)

    result = sync(ws)

    refused = sorted(name for name, param in names.items() if param.startswith("aws"))
    assert sorted(result.secrets_failed) == refused
    assert sorted(str(e.target) for e in result.errors) == sorted(
        [f"aws/ssm_parameter/{names[n]}" for n in refused] + ["aws/ssm_parameter/aws-both"])
    assert all(e.message.endswith("put_parameter failed (ValidationException)") for e in result.errors)
    entries = lock_entries(ws)
    assert sorted(entries) == sorted({*names} - {*refused} | {"both"})
    ssm = boto("ssm", aws)
    for name, entry in entries.items():
        param = names.get(name, "/app/both")
        stored = ssm.get_parameter(Name=param, WithDecryption=True)["Parameter"]["Value"]
        assert entry["targets"] == {f"aws/ssm_parameter/{param}": sha256_text(stored)}
        assert entry["hash"] == sha256_text(stored)


def test_writes_to_one_provider_overlap_up_to_its_max_concurrency(tmp_path: Path, vault: VaultServer) -> None:
    ws = workspace(tmp_path, {"vault": vault_provider(vault.url, max_concurrency=3)}, *_vault_secrets(7))
    result = _while_held(vault, 3, lambda: sync(ws))
    assert result.secrets_generated == [f"s{i}" for i in range(7)]
    assert vault.max_in_flight == 3


def test_a_provider_with_max_concurrency_1_is_called_one_request_at_a_time(
    tmp_path: Path, vault: VaultServer
) -> None:
    ws = workspace(tmp_path, {"vault": vault_provider(vault.url, max_concurrency=1)}, *_vault_secrets(5))
    vault.delay = 0.05  # long enough for concurrent requests to overlap
    assert sync(ws).secrets_generated == [f"s{i}" for i in range(5)]
    assert vault.max_in_flight == 1
    assert len(vault.requests) == 10  # a read and a write per path


def test_drift_reads_the_targets_of_one_provider_concurrently(tmp_path: Path, kube: KubernetesServer) -> None:
    secrets = [secret(f"s{i}", target("k8s", "kubernetes_secret", secret_name=f"app-{i}")) for i in range(4)]
    ws = workspace(tmp_path, {"k8s": kube_provider(kube.url)}, *secrets)
    sync(ws)
    kube.put_key("default", "app-2", "s2", "changed behind its back")
    report = _while_held(kube, 4, lambda: detect_drift(ws))
    assert [(i.secret, i.details["reason"]) for i in report.details] == [("s2", "value_changed")]


def test_a_second_write_of_the_same_remote_targets_waits_for_the_first_to_commit(
    tmp_path: Path, vault: VaultServer
) -> None:
    ws = workspace(tmp_path, {"vault": vault_provider(vault.url)}, *_vault_secrets(4))
    vault.hold()
    results: list[Any] = []
    first = threading.Thread(target=lambda: results.append(sync(ws)))
    second = threading.Thread(target=lambda: results.append(sync(ws)))
    first.start()
    try:
        assert vault.wait_in_flight(4)  # the first holds every target's lock, its calls in flight
        second.start()
    finally:
        vault.release()
        first.join(WAIT)
        second.join(WAIT)
    assert sorted(len(r.secrets_generated) for r in results) == [0, 4]  # the second planned on the commit
    for name, entry in lock_entries(ws).items():
        assert entry["hash"] == sha256_text((vault.data("secret", f"app/{name}") or {})["value"])


@pytest.mark.parametrize("status", [429, 503])
def test_vault_throttling_is_retried_with_backoff(
    tmp_path: Path, vault: VaultServer, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    sleeps = _record_backoff(monkeypatch)
    ws = workspace(tmp_path, {"vault": vault_provider(vault.url)}, *_vault_secrets(1))
    vault.throttle(status, 2, retry_after="1")
    assert sync(ws).secrets_generated == ["s0"]
    assert len(vault.requests) == 4  # two throttled, then the read and the write
    assert sleeps == [1.0, 1.0]  # Retry-After honoured


@pytest.mark.parametrize("status", [429, 503])
def test_kubernetes_throttling_is_retried_with_backoff(
    tmp_path: Path, kube: KubernetesServer, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    sleeps = _record_backoff(monkeypatch)
    ws = workspace(tmp_path, {"k8s": kube_provider(kube.url)},
                   secret("s", target("k8s", "kubernetes_secret", secret_name="app")))
    kube.throttle(status, 3)
    assert sync(ws).secrets_generated == ["s"]
    assert kube.data("default", "app") is not None
    assert len(sleeps) == 3 and all(0 < s <= 5 for s in sleeps)  # backoff with jitter, bounded


def test_throttling_that_does_not_end_fails_the_target_after_bounded_attempts(
    tmp_path: Path, vault: VaultServer, kube: KubernetesServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _record_backoff(monkeypatch)
    ws = workspace(tmp_path, {"vault": vault_provider(vault.url), "k8s": kube_provider(kube.url)},
                   secret("a", target("vault", "vault_kv", path="app")),
                   secret("b", target("k8s", "kubernetes_secret", secret_name="app")))
    vault.throttle(429, 100)
    kube.throttle(503, 100)
    result = sync(ws)
    assert {e.target: e.message for e in result.errors} == {
        "vault/vault_kv/secret/app": "vault/vault_kv/secret/app: write failed (RateLimitExceeded)",
        "k8s/kubernetes_secret/default/app/b": "k8s/kubernetes_secret/default/app: write failed (HTTP 503)",
    }
    assert (len(vault.requests), len(kube.requests)) == (4, 4)


class _ThrottlingAws(Peer):
    """An AWS JSON endpoint that always answers as SSM does when its rate limit is exceeded."""

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        return 400, {"__type": "ThrottlingException", "message": "Rate exceeded"}


@pytest.mark.server
def test_aws_throttling_is_retried_in_adaptive_mode_then_reported(
    tmp_path: Path, clean_sdk_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("botocore.retries.standard.ExponentialBackoff.delay_amount", lambda self, context: 0)
    with _ThrottlingAws() as peer:
        ws = workspace(tmp_path, {"aws": aws_provider(peer.url)}, secret("a", target("aws", "ssm_parameter", name="a")))
        (error,) = sync(ws).errors
        assert error.message == "aws/ssm_parameter/a: throttled by AWS (ThrottlingException)"
        assert len(peer.requests) == 4


def _record_backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The retries' sleeps, recorded instead of slept."""
    sleeps: list[float] = []
    monkeypatch.setattr("urllib3.util.retry.time.sleep", sleeps.append)
    return sleeps


# -- the fan-out itself ---------------------------------------------------------------------------


def _ctx(tmp_path: Path, **settings: Any) -> TargetContext:
    providers = {"vault": ProviderSpec("vault", "vault", {}, settings)}
    return TargetContext(tmp_path, providers, lambda key: None, ())


def test_fan_out_answers_in_call_order_with_failures_as_results(tmp_path: Path) -> None:
    kind, spec = get_kind("vault/vault_kv"), TargetSpec("vault", "vault_kv", {"path": "p"})

    def call(i: int) -> Call[int]:
        def run() -> int:
            if i % 2:
                raise TargetError(f"call {i} failed")
            return i
        return Call(kind, spec, run)

    results = fan_out([call(i) for i in range(6)], _ctx(tmp_path))
    assert [r.message if isinstance(r, TargetError) else r for r in results] == [
        0, "call 1 failed", 2, "call 3 failed", 4, "call 5 failed"]


def test_fan_out_raises_an_unexpected_error_once_every_call_has_ended(tmp_path: Path) -> None:
    kind, spec = get_kind("vault/vault_kv"), TargetSpec("vault", "vault_kv", {"path": "p"})
    ended = threading.Event()

    def broken() -> None:
        raise RuntimeError("bug")

    def slow() -> None:
        assert not ended.wait(0.2)
        ended.set()

    with pytest.raises(RuntimeError, match="bug"):
        fan_out([Call(kind, spec, broken), Call(kind, spec, slow)], _ctx(tmp_path))
    assert ended.is_set()


def test_an_invalid_max_concurrency_fails_the_calls_before_any_runs(tmp_path: Path) -> None:
    kind, spec = get_kind("vault/vault_kv"), TargetSpec("vault", "vault_kv", {"path": "p"})
    ran: list[int] = []
    results = fan_out([Call(kind, spec, lambda: ran.append(1))], _ctx(tmp_path, max_concurrency=0))
    assert [str(r) for r in results] == ["provider 'vault': max_concurrency must be a whole number between 1 and 64"]
    assert ran == []


def test_drift_reads_ssm_parameters_ten_per_request(tmp_path: Path, aws: str) -> None:
    from secretsapi.service.targets.aws import aws_client

    secrets = [secret(f"s{i}", target("aws", "ssm_parameter", name=f"/app/s{i}")) for i in range(23)]
    ws = workspace(tmp_path, {"aws": aws_provider(aws)}, *secrets)
    sync(ws)
    ssm = boto("ssm", aws)
    ssm.delete_parameter(Name="/app/s4")
    ssm.put_parameter(Name="/app/s17", Value="changed behind its back", Type="SecureString", Overwrite=True)
    client = aws_client("ssm", TargetSpec("aws", "ssm_parameter", {"name": "x"}), TargetContext.of(ws.definition()),
                        "aws/ssm_parameter")
    calls: list[str] = []

    def count(model: Any, **kwargs: Any) -> None:
        calls.append(model.name)

    client.meta.events.register("before-call.ssm", count)  # the engine's client: cached per settings
    try:
        drift = detect_drift(ws)
    finally:
        client.meta.events.unregister("before-call.ssm", count)
    assert [(i.secret, i.details["reason"]) for i in drift.details] == [
        ("s4", "target_missing"), ("s17", "value_changed")]
    assert sorted(calls) == ["GetParameters"] * 3


def test_key_vault_writes_overlap_up_to_the_providers_max_concurrency(
    tmp_path: Path, keyvault: AzureKeyVaultServer
) -> None:
    secrets = [secret(f"s{i}", target("azure", "azure_keyvault", secret_name=f"s{i}")) for i in range(5)]
    ws = workspace(tmp_path, {"azure": azure_provider(keyvault, max_concurrency=3)}, *secrets)
    result = _while_held(keyvault, 3, lambda: sync(ws))
    assert result.secrets_generated == [f"s{i}" for i in range(5)]
    assert keyvault.max_in_flight == 3
    assert all(keyvault.value(f"s{i}") for i in range(5))


def test_vercel_writes_overlap_up_to_the_providers_max_concurrency(tmp_path: Path, vercel: VercelServer) -> None:
    secrets = [secret(f"s{i}", target("vercel", "vercel_env", secret_name=f"S{i}")) for i in range(4)]
    ws = workspace(tmp_path, {"vercel": vercel_provider(vercel, max_concurrency=2)}, *secrets)
    result = _while_held(vercel, 2, lambda: sync(ws))
    assert result.secrets_generated == [f"s{i}" for i in range(4)]
    assert vercel.max_in_flight == 2
    assert sorted(v["key"] for v in vercel.variables()) == ["S0", "S1", "S2", "S3"]
