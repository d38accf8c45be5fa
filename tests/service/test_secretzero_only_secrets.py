"""Secrets SecretZero accepts that this service cannot make or write: each fails alone at sync, and every
other operation still answers for the rest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from secretsapi.service.drift import detect_drift
from secretsapi.service.policy import check_policies
from secretsapi.service.state.lockfile_io import read_lockfile
from secretsapi.service.status import list_secrets, secret_status
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace


def _file(path: str = "out/app.env", fmt: str = "dotenv") -> dict[str, Any]:
    return {"provider": "local", "kind": "file", "config": {"path": path, "format": fmt}}


def _workspace(tmp_path: Path, *secrets: dict[str, Any], environ: dict[str, str] | None = None,
               **top: Any) -> Workspace:
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump({"version": "1.0", "secrets": list(secrets), **top}, sort_keys=False))
    return Workspace(definition_path=path, environ=environ or {})


_GOOD = {"name": "db_password", "kind": "random_password", "targets": [_file()]}
_PAT = {"name": "gh_token", "kind": "provider_backed", "config": {"scopes": ["repo"]}, "targets": [_file()]}
_UNSET = {"name": "stripe_key", "kind": "static", "config": {"default": "${STRIPE_SECRET}"}, "targets": [_file()]}


def test_an_unsupported_generator_kind_fails_only_its_secret_at_sync(tmp_path: Path) -> None:
    result = sync(_workspace(tmp_path, _GOOD, _PAT))
    assert result.secrets_generated == ["db_password"]
    assert result.secrets_failed == ["gh_token"]
    (error,) = result.errors
    assert "generator kind 'provider_backed' is not supported by this service" in error.message


def test_a_static_without_a_value_fails_only_its_secret_with_a_message_naming_the_variable(tmp_path: Path) -> None:
    result = sync(_workspace(tmp_path, _GOOD, _UNSET))
    assert result.secrets_generated == ["db_password"]
    assert result.secrets_failed == ["stripe_key"]
    (error,) = result.errors
    assert error.message == (
        "static value is not set (config.default: undefined variable 'STRIPE_SECRET'): define it, "
        "or set the environment variable STRIPE_KEY"
    )


def test_a_static_without_a_value_is_taken_from_the_environment_variable_named_like_the_secret(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path, _UNSET, environ={"STRIPE_KEY": "sk_test_from_env"})  # named like the secret
    assert sync(ws).secrets_generated == ["stripe_key"]
    assert "stripe_key=sk_test_from_env" in (tmp_path / "out/app.env").read_text()


def test_a_boolean_static_is_written_and_hashed_as_secretzero_writes_it(tmp_path: Path) -> None:
    flag = {"name": "debug", "kind": "static", "config": {"value": True}, "targets": [_file()]}
    ws = _workspace(tmp_path, flag)
    assert sync(ws).secrets_generated == ["debug"]
    assert (tmp_path / "out/app.env").read_text() == "debug=True\n"
    entry = read_lockfile(ws.lockfile_path).entry("debug")
    assert entry is not None and entry.hash == sha256_text("True")


def test_a_mapping_static_is_written_and_hashed_as_compact_sorted_json(tmp_path: Path) -> None:
    creds = {"name": "creds", "kind": "static", "config": {"value": {"user": "app", "port": 5432}},
             "targets": [_file("out/creds.json", "json")]}
    ws = _workspace(tmp_path, creds)
    assert sync(ws).secrets_generated == ["creds"]
    entry = read_lockfile(ws.lockfile_path).entry("creds")
    assert entry is not None and entry.hash == sha256_text('{"port":5432,"user":"app"}')


def test_status_drift_and_policy_answer_beside_secrets_that_fail_at_sync(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, _GOOD, _PAT, _UNSET,
                    policies={"rot": {"kind": "rotation", "require_rotation_period": True}})
    sync(ws)
    assert [s.name for s in list_secrets(ws)] == ["db_password", "gh_token", "stripe_key"]
    assert secret_status(ws, "db_password").exists
    assert not secret_status(ws, "gh_token").exists
    drift = detect_drift(ws)
    assert "db_password" not in drift.secrets_with_drift
    assert {i.secret for i in check_policies(ws).errors} == {"db_password", "gh_token", "stripe_key"}


def test_a_policy_of_a_kind_this_service_does_not_check_is_a_warning_item(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, _GOOD, policies={"ids": {"kind": "provider_identity"}, "bare": {"severity": "error"}})
    result = check_policies(ws)
    assert result.compliant
    assert {(w.policy, w.message) for w in result.warnings} == {
        ("ids", "policy with kind 'provider_identity' is not checked by this service "
                "(it checks rotation, access, compliance)"),
        ("bare", "policy with no kind is not checked by this service (it checks rotation, access, compliance)"),
    }


def test_an_unknown_compliance_standard_is_a_warning_item(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, _GOOD, metadata={"compliance": ["security-best-practices"]})
    (warning,) = check_policies(ws).warnings
    assert "'security-best-practices' is not checked by this service" in warning.message
