"""The remote kinds' shared preamble: auth-kind checks, group config checks, SDK error translation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.definition.model import Placement, ProviderSpec, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.remote import checked_group, sdk_errors, sdk_failure

AWS_KINDS = "ambient, env, static, access_key, profile, assume_role"


@pytest.mark.parametrize(("type_", "config", "family", "supported"), [
    ("aws/ssm_parameter", {"name": "x"}, "AWS", AWS_KINDS),
    ("aws/secrets_manager", {"name": "x"}, "AWS", AWS_KINDS),
    ("vault/vault_kv", {"path": "x"}, "Vault", "token, token_file, env, ambient, approle"),
    ("kubernetes/kubernetes_secret", {"secret_name": "x"}, "Kubernetes",
     "token, kubeconfig, in_cluster, ambient, env"),
])
def test_an_unsupported_auth_kind_is_refused_naming_the_family_and_its_kinds(
    tmp_path: Path, clean_sdk_env: None, type_: str, config: dict[str, Any], family: str, supported: str,
) -> None:
    provider_kind, kind_name = type_.split("/")
    providers = {"p": ProviderSpec("p", provider_kind, {"kind": "oidc"}, {})}
    ctx = TargetContext(tmp_path, providers, lambda key: None, ())
    placement = Placement(TargetSpec("p", kind_name, config), "a")
    kind = get_kind(type_)
    message = f"provider 'p': auth kind 'oidc' is not supported for {family} (supported: {supported})"
    with pytest.raises(TargetError) as written:
        kind.write([(placement, "value")], ctx)
    with pytest.raises(TargetError) as read:
        kind.read([placement], ctx)
    assert str(written.value) == str(read.value) == message


def test_a_group_is_named_by_its_location_and_checks_each_target_given() -> None:
    kind = get_kind("vault/vault_kv")
    valid = TargetSpec("vault", "vault_kv", {"path": "app"})
    invalid = TargetSpec("vault", "vault_kv", {"path": "app", "key": 3})
    ctx = TargetContext(Path("."), {}, lambda key: None, ())
    assert checked_group(kind, [valid], "secret/app", ctx) == "vault/vault_kv/secret/app"
    with pytest.raises(TargetError, match=r"^vault/vault_kv/secret/app: config\.key must be a string$"):
        checked_group(kind, [valid, invalid], "secret/app", ctx)


def test_sdk_errors_give_the_failure_class_never_its_text() -> None:
    with pytest.raises(TargetError) as raised, sdk_errors(sdk_failure, "p/k/x", "write"):
        raise ValueError("s3cr3t-value")
    assert str(raised.value) == "p/k/x: write failed (ValueError)"
    assert raised.value.__cause__ is None
    assert raised.value.__suppress_context__  # the SDK's exception does not ride along
    with pytest.raises(TargetError) as raised, sdk_errors(sdk_failure, "p/k/x", "read"):
        raise ConnectionRefusedError("s3cr3t-value")
    assert str(raised.value) == "p/k/x: cannot reach the endpoint (connection refused)"


def test_sdk_errors_let_a_target_error_through_as_it_is() -> None:
    original = TargetError("provider 'p': no Vault token")
    with pytest.raises(TargetError) as raised, sdk_errors(sdk_failure, "p/k/x", "write"):
        raise original
    assert raised.value is original
