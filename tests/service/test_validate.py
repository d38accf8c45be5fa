"""Validation of local target paths against the allowed target roots (SERVICE_TARGET_ROOTS)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.errors import TargetError
from secretsapi.service.sync import sync
from secretsapi.service.targets import aws, infisical, kubernetes_secret, vault_kv
from secretsapi.service.validate import validate_document, validate_file
from secretsapi.service.workspace import Workspace
from tests.factories import definition, file_secret, registered_providers, write_definition

OUTSIDE = "path /srv/app/.env is outside the allowed target roots (SERVICE_TARGET_ROOTS)"


def test_a_file_with_an_absolute_path_outside_its_folder_is_invalid_naming_secret_and_target(
        tmp_path: Path) -> None:
    path = write_definition(tmp_path, definition(file_secret("db", "/srv/app/.env")))
    report = validate_file(path)
    assert report.valid is False
    assert report.errors == [f"secrets[0] 'db' targets[0] local/file config.path: {OUTSIDE}"]


def test_a_file_with_an_absolute_path_inside_a_configured_root_is_valid(tmp_path: Path) -> None:
    path = write_definition(tmp_path, definition(file_secret("db", "/srv/app/.env")))
    assert validate_file(path, target_roots=(Path("/srv/app"),)).errors == []


def test_a_path_made_absolute_by_a_variable_is_checked_after_interpolation(tmp_path: Path) -> None:
    doc = definition(file_secret("db", "{{ var.dir }}/.env"), variables={"dir": "/srv/app"})
    path = write_definition(tmp_path, doc)
    assert validate_file(path).errors == [f"secrets[0] 'db' targets[0] local/file config.path: {OUTSIDE}"]
    assert validate_file(path, target_roots=(Path("/srv"),)).errors == []


def test_a_relative_path_leaving_the_folder_is_invalid_by_default(tmp_path: Path) -> None:
    path = write_definition(tmp_path, definition(file_secret("db", "../x.env")))
    assert validate_file(path).errors == [
        "secrets[0] 'db' targets[0] local/file config.path: path ../x.env is outside the allowed target roots "
        "(SERVICE_TARGET_ROOTS)"]
    assert validate_file(path, target_roots=(tmp_path.parent,)).errors == []


def test_a_submitted_document_without_roots_is_checked_for_shape_only() -> None:
    doc = definition(file_secret("db", "/srv/app/.env"), file_secret("up", "../x.env"))
    assert validate_document(doc).errors == []


def test_a_submitted_document_checks_absolute_paths_against_the_configured_roots() -> None:
    doc = definition(file_secret("db", "/srv/app/.env"), file_secret("ok", "/etc/app/.env"),
                     file_secret("rel", "../x.env"))
    report = validate_document(doc, target_roots=(Path("/etc/app"),))
    assert report.errors == [f"secrets[0] 'db' targets[0] local/file config.path: {OUTSIDE}"]


def test_template_paths_are_checked_too(tmp_path: Path) -> None:
    target = {"provider": "local", "kind": "template",
              "config": {"template_path": "t.j2", "output_path": "/srv/app/.env"}}
    doc = definition({"name": "db", "kind": "random_password", "targets": [target]})
    assert validate_file(write_definition(tmp_path, doc)).errors == [
        f"secrets[0] 'db' targets[0] local/template config.output_path: {OUTSIDE}"]


# -- every target checked by its kind's own rules, every problem reported ---------------------


def _secret(name: str, *targets: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"name": name, "kind": "random_password", "rotation_period": "30d", "targets": list(targets), **fields}


def _target(provider: str, kind: str, **config: Any) -> dict[str, Any]:
    return {"provider": provider, "kind": kind, "config": config}


def test_a_local_file_without_a_path_is_an_error_naming_the_secret_and_the_target_position() -> None:
    doc = definition(_secret("ok", _target("local", "file", path="a.env")),
                     _secret("db", _target("local", "file", path="a.env"), _target("local", "file", format="json")))
    assert validate_document(doc).errors == [
        "secrets[1] 'db' targets[1] local/file: config.path is required and must be a non-empty string"]


def test_a_remote_target_with_missing_config_is_an_error_by_its_kind_s_own_rules() -> None:
    doc = definition(_secret("db", _target("vault", "kv", mount_point="secret"),
                             _target("aws", "ssm_parameter", name="/app/db", type="Secret")))
    assert validate_document(doc).errors == [
        "secrets[0] 'db' targets[0] vault/kv: config.path is required",
        "secrets[0] 'db' targets[1] aws/ssm_parameter: config.type 'Secret' is not one of SecureString, "
        "String, StringList"]


def test_every_problem_of_a_secret_is_reported_not_only_the_first(tmp_path: Path) -> None:
    doc = definition(_secret("db", _target("local", "file"), _target("local", "template", output_path="o"),
                             _target("local", "file", path="../x.env"), rotation_period="soon"))
    assert validate_file(write_definition(tmp_path, doc)).errors == [
        "secrets[0].rotation_period: 'soon' is not a valid period: write a whole number and a unit, d (days), "
        "w (weeks), m (months of 30 days) or y (years of 365 days), as in 90d",
        "secrets[0] 'db' targets[0] local/file: config.path is required and must be a non-empty string",
        "secrets[0] 'db' targets[1] local/template: config.template_path is required and must be a non-empty "
        "string",
        "secrets[0] 'db' targets[2] local/file config.path: path ../x.env is outside the allowed target roots "
        "(SERVICE_TARGET_ROOTS)"]


def test_template_field_targets_are_checked_where_the_template_defines_them() -> None:
    field = {"generator": {"kind": "random_password"}, "targets": [_target("local", "file", format="toml")]}
    doc = definition({"name": "app", "kind": "templates.creds", "rotation_period": "30d"},
                     templates={"creds": {"fields": {"password": field}}})
    assert validate_document(doc).errors == [
        "templates.creds.fields.password targets[0] local/file: config.path is required and must be a non-empty "
        "string"]


def test_an_unknown_format_is_a_warning_that_the_target_fails_at_sync_as_secretzero_accepts_it_here() -> None:
    report = validate_document(definition(_secret("db", _target("local", "file", path="a.env", format="xml"))))
    assert report.valid is True
    assert report.warnings == [
        "secrets[0] 'db' targets[0] local/file: config.format 'xml' is not one of dotenv, json, yaml, toml, "
        "tfvars: this target fails at sync"]


def test_a_format_written_in_capitals_is_valid_as_secretzero_reads_it() -> None:
    report = validate_document(definition(_secret("db", _target("local", "file", path="a.env", format=" JSON"))))
    assert report.errors == [] and report.warnings == []


def test_an_interpolated_format_is_not_echoed() -> None:
    doc = definition(_secret("db", _target("local", "file", path="a.env", format="${FMT}")))
    (warning,) = validate_document(doc, environ={"FMT": "s3cr3t-format"}).warnings
    assert "s3cr3t-format" not in warning and "config.format the interpolated value" in warning


def test_a_target_naming_an_undeclared_provider_alias_is_an_error() -> None:
    doc = definition(_secret("db", _target("mylocal", "file", path="a.env"),
                             _target("prod_vault", "kv", path="app/db")))
    assert validate_document(doc).errors == [
        "secrets[0] 'db' targets[0] mylocal/file: provider 'mylocal' is not declared in providers and is not "
        f"a provider kind ({registered_providers()})",
        "secrets[0] 'db' targets[1] prod_vault/kv: provider 'prod_vault' is not declared in providers and is "
        f"not a provider kind ({registered_providers()})"]


def test_a_declared_alias_and_an_undeclared_provider_kind_are_both_valid() -> None:
    doc = definition(_secret("db", _target("prod_vault", "kv", path="app/db"), _target("aws", "ssm_parameter",
                                                                                        name="/app/db")),
                     providers={"prod_vault": {"kind": "vault"}})
    assert validate_document(doc).errors == []


def test_an_undeclared_provider_of_a_kind_this_service_does_not_write_stays_a_warning() -> None:
    report = validate_document(definition(_secret("db", _target("keeper", "keeper_record", title="app"))))
    assert report.errors == []
    assert report.warnings == ["secrets[0].targets[0]: target kind 'keeper_record' is not supported by this service: "
                               "secret 'db' will not be written there"]


def test_loading_a_definition_for_an_operation_is_no_stricter_its_bad_targets_fail_alone_at_sync(
        tmp_path: Path) -> None:
    doc = definition(_secret("good", _target("local", "file", path="out/a.env")),
                     _secret("nopath", _target("local", "file", format="json")),
                     _secret("alias", _target("mylocal", "file", path="out/a.env")))
    path = write_definition(tmp_path, doc)
    assert len(validate_file(path).errors) == 2
    result = sync(Workspace(definition_path=path, environ={}))
    assert result.secrets_generated == ["good"]
    assert result.secrets_failed == ["nopath", "alias"]


# -- validation and sync agree: what validation accepts syncs without a config error ----------

_STORE_REACHED = "the store was reached"  # what a remote write meets once its config is accepted

# Per supported kind: a valid config, then per key the values validation must accept and those
# it must refuse (None: the key left unset). Each case is the valid config with one key changed.
_CONFIGS: list[tuple[str, str, dict[str, Any], dict[str, tuple[list[Any], list[Any]]]]] = [
    ("local", "file", {"path": "out/a.env"}, {
        "path": (["out/b.env", "out/c.json", "d/e/f.yaml", "/ROOT/out/g.toml"],
                 [None, "", "  ", "../x.env", "/etc/x.env", 5]),
        "format": (["dotenv", "JSON", " yaml ", "toml", "tfvars", "", None], ["xml", "raw", 1]),
        "merge": ([True, False, "no"], []),
        "key": (["K", "DB_PASSWORD", "a.b-c", "", 7], ["a b", "x=y"]),
    }),
    ("local", "file", {"path": "out/v.tfvars"}, {
        "key": (["db_password", "Db-1"], ["1db", "db.password"]),
        "format": (["json", "tfvars"], ["hcl"]),
    }),
    ("local", "template", {"template_path": "t.j2", "output_path": "out/o.txt"}, {
        "template_path": (["/ROOT/t.j2"], [None, "", "/etc/t.j2", 3]),
        "output_path": (["out/p.txt", "/ROOT/q.txt"], [None, "", "../o.txt", "/tmp/o.txt"]),
    }),
    ("aws", "ssm_parameter", {"name": "/app/db"}, {
        "name": (["/app/x"], [None, "", 5]),
        "type": (["String", "SecureString", "StringList", None], ["Secret", 1]),
        "tier": (["Advanced", "Intelligent-Tiering"], ["Gold"]),
        "overwrite": ([True, False], ["yes"]),
        "description": (["d"], [3]),
        "kms_key_id": (["alias/k"], [[1]]),
    }),
    ("aws", "secrets_manager", {"name": "app/db"}, {
        "name": (["x"], [None, "", 5]),
        "description": (["d"], [False]),
        "kms_key_id": (["k"], [1]),
    }),
    ("vault", "kv", {"path": "app/db"}, {
        "path": (["x/y"], [None, "", 2]),
        "version": ([1, 2], [3, True, "2"]),
        "mount_point": (["kv"], [4]),
        "key": (["k"], [5]),
    }),
    ("kubernetes", "kubernetes_secret", {"secret_name": "app"}, {
        "secret_name": (["x"], [None, "", 7]),
        "namespace": (["ns"], [1]),
        "data_key": (["k"], [2]),
        "labels": ([{"a": "b"}], [{"a": 1}, "x"]),
        "annotations": ([{"a": "b"}], [["a"]]),
    }),
    ("infisical", "infisical", {"workspace_id": "ws"}, {
        "workspace_id": (["other"], [7]),
        "environment": (["prod", None], [1]),
        "secret_path": (["/", "/app/db", "/app/", "", None], ["app", "/a//b", "/a/../b", "/a b", 5]),
        "secret_name": (["DB_PASSWORD", None], ["A B", "a/b", 3]),
        "key": (["K"], ["a b"]),
    }),
]


def _cases() -> list[Any]:
    cases = []
    for provider, kind, base, keys in _CONFIGS:
        cases.append(pytest.param(provider, kind, base, True, id=f"{provider}/{kind}-{base}"))
        for key, (good, bad) in keys.items():
            for accepted, values in ((True, good), (False, bad)):
                for value in values:
                    config = {k: v for k, v in {**base, key: value}.items() if v is not None}
                    cases.append(pytest.param(provider, kind, config, accepted,
                                              id=f"{provider}/{kind}-{key}={value!r}"))
    return cases


@pytest.fixture
def stores_reached(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remote writes stop where they would call the store, once their config passed."""
    def reached(*args: Any, **kwargs: Any) -> Any:
        raise TargetError(_STORE_REACHED)

    monkeypatch.setattr(aws, "aws_client", reached)
    monkeypatch.setattr(vault_kv.VaultKvKind, "_client", reached)
    monkeypatch.setattr(kubernetes_secret, "load_sdk", reached)
    monkeypatch.setattr(infisical, "_access_token", reached)


@pytest.mark.usefixtures("stores_reached")
@pytest.mark.parametrize(("provider", "kind", "config", "accepted"), _cases())
def test_validation_accepts_a_target_exactly_when_sync_meets_no_config_error(
        tmp_path: Path, provider: str, kind: str, config: dict[str, Any], accepted: bool) -> None:
    (tmp_path / "t.j2").write_text("{{ secrets['db'] }}\n")
    config = {k: v.replace("/ROOT", str(tmp_path)) if isinstance(v, str) else v for k, v in config.items()}
    path = write_definition(tmp_path, definition(_secret("db", _target(provider, kind, **config))))
    report = validate_file(path)
    refused_by_validation = bool(report.errors) or any("fails at sync" in w for w in report.warnings)
    result = sync(Workspace(definition_path=path, environ={}))
    messages = [error.message for error in result.errors]
    refused_by_sync = result.secrets_failed == ["db"] and not any(_STORE_REACHED in m for m in messages)
    assert (refused_by_validation, refused_by_sync) == (not accepted, not accepted), (report, messages)


_VAULT = {"address": "http://127.0.0.1:1", "token": "t"}


@pytest.mark.parametrize(("provider", "accepted"), [
    ({"kind": "vault", "auth": {"kind": "token"}, "config": {**_VAULT, "timeout": 30}}, True),
    ({"kind": "vault", "auth": {"kind": "kubernetes"}, "config": _VAULT}, False),
    ({"kind": "vault", "config": {**_VAULT, "timeout": 0}}, False),
    ({"kind": "vault", "auth": {"kind": "ambient", "config": {"timeout": "5"}}, "config": _VAULT}, False),
    ({"kind": "vault", "config": {**_VAULT, "max_concurrency": 1}}, True),
    ({"kind": "vault", "config": {**_VAULT, "max_concurrency": 64}}, True),
    ({"kind": "vault", "config": {**_VAULT, "max_concurrency": 0}}, False),
    ({"kind": "vault", "config": {**_VAULT, "max_concurrency": 65}}, False),
    ({"kind": "vault", "config": {**_VAULT, "max_concurrency": "8"}}, False),
    ({"kind": "vault", "config": {**_VAULT, "max_concurrency": 2.5}}, False),
    ({"kind": "vault", "config": {**_VAULT, "max_concurrency": True}}, False),
])
def test_a_declared_provider_s_settings_its_store_refuses_are_a_warning_that_its_targets_fail_at_sync(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: dict[str, Any], accepted: bool) -> None:
    def reached(*args: Any, **kwargs: Any) -> Any:
        raise TargetError(_STORE_REACHED)

    monkeypatch.setattr(vault_kv._clients, "get", reached)  # after every check of the provider
    doc = definition(_secret("db", _target("prod", "kv", path="app/db"), _target("prod", "kv", path="app/x")),
                     providers={"prod": provider})
    path = write_definition(tmp_path, doc)
    report = validate_file(path)
    assert report.errors == []
    assert len(report.warnings) == (0 if accepted else 1)  # once per provider
    assert all(w.startswith("secrets[0] 'db' targets[0] prod/kv: provider 'prod': ") for w in report.warnings)
    messages = [error.message for error in sync(Workspace(definition_path=path, environ={})).errors]
    assert all(_STORE_REACHED in m for m in messages) == accepted, messages


@pytest.mark.parametrize(("name", "config", "accepted"), [
    ("db_password", {}, True),
    ("db.password", {}, False),
    ("db.password", {"key": "db_password"}, True),
    ("1db", {"format": "json"}, True),
])
def test_the_key_a_file_target_stores_under_by_default_is_judged_by_its_format_as_sync_judges_it(
        tmp_path: Path, name: str, config: dict[str, Any], accepted: bool) -> None:
    path = write_definition(tmp_path, definition(_secret(name, _target("local", "file", path="v.tfvars", **config))))
    warnings = validate_file(path).warnings
    assert warnings == ([] if accepted else [
        f"secrets[0] '{name}' targets[0] local/file: '{name}' is not a valid tfvars variable name: this target "
        "fails at sync"])
    assert sync(Workspace(definition_path=path, environ={})).secrets_failed == ([] if accepted else [name])


def test_a_template_field_s_own_target_is_judged_with_the_field_s_name() -> None:
    field = {"generator": {"kind": "random_password"}, "targets": [_target("local", "file", path="v.tfvars")]}
    doc = definition({"name": "app", "kind": "templates.creds", "rotation_period": "30d"},
                     templates={"creds": {"fields": {"db.password": field}}})
    assert validate_document(doc).warnings == [
        "templates.creds.fields.db.password targets[0] local/file: 'db.password' is not a valid tfvars variable "
        "name: this target fails at sync"]
