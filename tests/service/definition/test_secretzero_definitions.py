"""Definitions SecretZero accepts: the checker takes them, with warnings for what this service does not do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.loading.checker import DefinitionChecker
from secretsapi.service.validate import validate_document
from tests.factories import bare_secret as secret
from tests.factories import load_document as load
from tests.factories import load_errors


def file_target(path: str = "out/app.env", **config: Any) -> dict[str, Any]:
    return {"provider": "local", "kind": "file", "config": {"path": path, **config}}


def static(name: str = "s", **config: Any) -> dict[str, Any]:
    return {"name": name, "kind": "static", "config": config, "targets": [file_target()]}


def checked(doc: dict[str, Any], environ: dict[str, str] | None = None) -> DefinitionChecker:
    checker = DefinitionChecker(environ or {}, strict=True)
    checker.check({"version": "1", **doc})
    return checker


# -- static values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [True, 8080, 2.5, {"user": "app", "port": 5432}])
def test_a_static_value_that_is_not_text_is_accepted(tmp_path: Path, value: object) -> None:
    definition = load(tmp_path, {"secrets": [static(value=value)]})
    assert definition.secret("s").units[0].generator.unavailable is None


def test_a_static_without_a_value_is_a_warning_naming_the_secret_at_validation() -> None:
    report = validate_document({"version": "1", "secrets": [static("api_token", rotation_period="30d")]})
    assert report.valid, report.errors
    assert any("static value is not set" in w and "secret 'api_token'" in w for w in report.warnings)


def test_a_static_without_a_value_loads_and_is_marked_to_fail_at_sync(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [static("api_token", value=None), secret(name="other")]})
    generator = definition.secret("api_token").units[0].generator
    assert generator.unavailable == "static value is not set: set config.value or the environment variable API_TOKEN"
    assert definition.secret("other").units[0].generator.unavailable is None


def test_a_static_with_an_undefined_variable_loads_and_is_marked_to_fail_at_sync(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [static("stripe_key", default="${STRIPE_KEY}")]})
    assert definition.secret("stripe_key").units[0].generator.unavailable is not None


def test_a_static_without_a_value_takes_the_environment_variable_named_like_the_secret(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [static("api_token", default="${NOT_SET}")]},
                      environ={"API_TOKEN": "from-the-environment"})
    generator = definition.secret("api_token").units[0].generator
    assert generator.unavailable is None
    assert generator.config["default"] == "from-the-environment"


def test_the_environment_value_of_a_static_does_not_change_the_definition_hash(tmp_path: Path) -> None:
    doc = {"secrets": [static("api_token")]}
    first = load(tmp_path, doc, environ={"API_TOKEN": "one"}).secret("api_token").definition_hash
    second = load(tmp_path, doc, environ={"API_TOKEN": "two"}).secret("api_token").definition_hash
    assert first == second


def test_a_static_validation_pattern_is_not_applied_to_an_unset_value(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [static("k", default="${K}", validation="^sk_")]})
    assert definition.secret("k").units[0].generator.unavailable is not None


# -- variables checked where they are used ---------------------------------------------------------


def test_an_undefined_variable_in_an_unsupported_provider_is_not_fatal(tmp_path: Path) -> None:
    doc = {"providers": {"keeper": {"kind": "keeper", "auth": {"config": {"token": "${KEEPER_TOKEN}"}}}},
           "secrets": [secret(targets=[{"provider": "keeper", "kind": "keeper_record", "config": {}}])]}
    assert load(tmp_path, doc).secret("s")


def test_an_undefined_variable_in_an_unsupported_target_is_not_fatal(tmp_path: Path) -> None:
    target = {"provider": "azure_devops", "kind": "azdo_variable_group", "config": {"project": "${AZDO_PROJECT}"}}
    assert load(tmp_path, {"secrets": [secret(targets=[target])]}).secret("s")


def test_an_undefined_variable_in_agent_instructions_is_not_fatal(tmp_path: Path) -> None:
    instructions = {"summary": "Use {{ secret_name }}", "steps": [{"params": {"code": "${DEVICE_CODE}"}}]}
    assert load(tmp_path, {"secrets": [secret(agent_instructions=instructions)]}).secret("s")


def test_an_undefined_variable_in_script_arguments_is_left_to_the_shell(tmp_path: Path) -> None:
    script = {"name": "s", "kind": "script",
              "config": {"command": "sh", "args": ["-c", "echo ${FROM_THE_SHELL}"]}}
    definition = load(tmp_path, {"secrets": [script]})
    assert definition.secret("s").units[0].generator.config["args"] == ["-c", "echo ${FROM_THE_SHELL}"]


def test_an_undefined_variable_in_a_supported_target_path_fails_the_load(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, {"secrets": [secret(targets=[file_target("${APP_DIR}/.env")])]})
    assert errors == ["secrets[0].targets[0].config.path: undefined variable 'APP_DIR'"]


def test_an_undefined_variable_in_a_supported_target_path_is_a_warning_at_validation() -> None:
    checker = checked({"secrets": [secret(rotation_period="30d", targets=[file_target("${APP_DIR}/.env")])]})
    assert checker.errors == []
    assert any(w.startswith("secrets[0].targets[0].config.path: undefined variable 'APP_DIR'")
               for w in checker.warnings), checker.warnings


def test_an_undefined_variable_in_a_provider_a_supported_target_uses_is_a_warning_naming_it(tmp_path: Path) -> None:
    doc = {"providers": {"vault": {"kind": "vault", "config": {"address": "${VAULT_ADDR}"}}},
           "secrets": [secret(targets=[{"provider": "vault", "kind": "kv", "config": {"path": "app"}}])]}
    definition = load(tmp_path, doc)
    assert definition.providers["vault"].config["address"] == "${VAULT_ADDR}"
    assert ("providers.vault.config.address: undefined variable 'VAULT_ADDR' (left as written: the targets "
            "using provider 'vault' fail until it is defined)") in definition.warnings


def test_an_undefined_variable_in_a_supported_provider_no_target_uses_is_not_fatal(tmp_path: Path) -> None:
    doc = {"providers": {"vault": {"kind": "vault", "config": {"address": "${VAULT_ADDR}"}}},
           "secrets": [secret()]}
    assert load(tmp_path, doc).secret("s")


def test_an_undefined_variable_in_metadata_is_a_warning(tmp_path: Path) -> None:
    definition = load(tmp_path, {"metadata": {"owner": "${TEAM}"}, "secrets": [secret()]})
    assert "metadata.owner: undefined variable 'TEAM' (left as written)" in definition.warnings


# -- {{ }} expressions -----------------------------------------------------------------------------


@pytest.mark.parametrize("expression", ["{{ var.region or 'eu' }}", "{{ var.region | default('eu') }}"])
def test_an_expression_with_a_fallback_uses_it_for_an_undefined_variable(tmp_path: Path, expression: str) -> None:
    definition = load(tmp_path, {"secrets": [secret(targets=[file_target(f"out/{expression}.env")])]})
    assert definition.secret("s").targets[0].config["path"] == "out/eu.env"


# -- policies and compliance -----------------------------------------------------------------------


@pytest.mark.parametrize(("policy", "named"), [({"kind": "provider_identity"}, "provider_identity"),
                                               ({"severity": "error"}, "has no kind")])
def test_a_policy_this_service_does_not_check_is_a_warning(policy: dict[str, Any], named: str) -> None:
    checker = checked({"secrets": [secret(rotation_period="30d")], "policies": {"p": policy}})
    assert checker.errors == []
    assert any(w.startswith("policies.p: policy") and named in w for w in checker.warnings), checker.warnings


def test_a_compliance_policy_of_an_unknown_standard_is_a_warning() -> None:
    checker = checked({"secrets": [secret(rotation_period="30d")],
                       "policies": {"p": {"kind": "compliance", "standard": "pci"}}})
    assert checker.errors == []
    assert any(w.startswith("policies.p.standard: 'pci' is not checked") for w in checker.warnings)


def test_an_unknown_compliance_standard_in_metadata_is_a_warning() -> None:
    checker = checked({"secrets": [secret(rotation_period="30d")],
                       "metadata": {"compliance": ["soc2", "security-best-practices"]}})
    assert checker.errors == []
    assert any("'security-best-practices' is not checked by this service" in w for w in checker.warnings)


# -- charset ---------------------------------------------------------------------------------------


def test_a_charset_given_as_characters_is_a_warning_saying_alphanumeric_is_used() -> None:
    checker = checked({"secrets": [secret(rotation_period="30d", config={"charset": "abcXYZ0123-_"})]})
    assert checker.errors == []
    assert any(w.startswith("secrets[0].config.charset: 'abcXYZ0123-_' is not a charset name")
               and "alphanumeric is used" in w for w in checker.warnings), checker.warnings


def test_a_charset_from_the_environment_is_not_echoed_in_its_warning() -> None:
    checker = checked({"secrets": [secret(rotation_period="30d", config={"charset": "${CHARS}"})]},
                      {"CHARS": "private-chars"})
    assert not any("private-chars" in w for w in checker.warnings)


# -- Vault kind aliases ----------------------------------------------------------------------------


@pytest.mark.parametrize("alias", ["kv", "kv2", "kv-v2", "kvv2", "vault_kv"])
def test_vault_kind_aliases_resolve_to_the_vault_kv_type_keeping_the_kind_as_written(
    tmp_path: Path, alias: str
) -> None:
    target = {"provider": "vault", "kind": alias, "config": {"path": "app"}}
    definition = load(tmp_path, {"secrets": [secret(targets=[target])]})
    (spec,) = definition.secret("s").targets
    assert (spec.type, spec.kind) == ("vault/vault_kv", alias)


def test_a_vault_kind_alias_is_not_reported_as_unsupported() -> None:
    target = {"provider": "vault", "kind": "kv2", "config": {"path": "app"}}
    checker = checked({"secrets": [secret(rotation_period="30d", targets=[target])]})
    assert not any("not supported" in w for w in checker.warnings), checker.warnings


# -- unsupported kinds -----------------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "kind"), [("keeper", "keeper_record"), ("local", "sops_file"),
                                                ("azure_devops", "azdo_pipeline")])
def test_an_unsupported_target_kind_is_a_warning_naming_the_kind_and_the_secret(provider: str, kind: str) -> None:
    target = {"provider": provider, "kind": kind, "config": {}}
    checker = checked({"secrets": [secret(name="db", rotation_period="30d", targets=[target])]})
    assert checker.errors == []
    assert (f"secrets[0].targets[0]: target kind '{kind}' is not supported by this service: "
            "secret 'db' will not be written there") in checker.warnings


@pytest.mark.parametrize("kind", ["provider_backed", "entra-agent-blueprint"])
def test_an_unsupported_generator_kind_is_a_warning_and_loads_marked_to_fail_at_sync(
    tmp_path: Path, kind: str
) -> None:
    doc = {"secrets": [{"name": "tok", "kind": kind, "config": {"scopes": ["repo"]}}, secret()]}
    checker = checked(doc)
    assert checker.errors == []
    assert (f"secrets[0].kind: generator kind '{kind}' is not supported by this service: "
            "secret 'tok' will fail at sync") in checker.warnings
    definition = load(tmp_path, doc)
    assert definition.secret("tok").units[0].generator.unavailable is not None
    assert definition.secret("s").units[0].generator.unavailable is None


def test_an_unsupported_generator_kind_in_a_template_field_is_a_warning(tmp_path: Path) -> None:
    doc = {"templates": {"t": {"fields": {"f": {"generator": {"kind": "provider_backed"}}}}},
           "secrets": [{"name": "x", "kind": "templates.t"}]}
    definition = load(tmp_path, doc)
    assert definition.secret("x").units[0].generator.unavailable is not None
    assert any("generator kind 'provider_backed'" in w for w in definition.warnings)


# -- what stays an error ---------------------------------------------------------------------------


def test_a_missing_version_stays_an_error_at_validation() -> None:
    report = validate_document({"secrets": [secret(rotation_period="30d")]})
    assert "Missing required field: version" in report.errors


def test_a_static_value_not_matching_its_pattern_is_a_warning_and_fails_that_secret_at_sync(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [static("key", value="pk_live_1", validation="sk_"), secret()]})
    assert definition.secret("key").units[0].generator.unavailable == (
        "static value does not match the validation pattern"
    )
    assert "secrets[0].config.value: does not match the validation pattern: secret 'key' will fail at sync" in (
        definition.warnings
    )
    assert not any("pk_live_1" in w for w in definition.warnings)


def _template_with_unset_static() -> dict[str, Any]:
    return {"templates": {"db": {"fields": {"password": {"generator": {"kind": "static", "config": {}}},
                                            "user": {"generator": {"kind": "static", "config": {"value": "app"}}}}}},
            "secrets": [{"name": "main", "kind": "templates.db"}]}


def test_a_template_field_static_without_a_value_takes_secret_underscore_field_from_the_environment(
    tmp_path: Path,
) -> None:
    definition = load(tmp_path, _template_with_unset_static(), environ={"MAIN_PASSWORD": "from-env"})
    password, user = definition.secret("main").units
    assert (password.generator.unavailable, password.generator.config["value"]) == (None, "from-env")
    assert user.generator.unavailable is None


def test_a_template_field_static_without_a_value_names_its_environment_variable_when_unset(tmp_path: Path) -> None:
    password, _ = load(tmp_path, _template_with_unset_static()).secret("main").units
    assert password.generator.unavailable == (
        "static value is not set: set config.value or the environment variable MAIN_PASSWORD"
    )


def test_agent_instructions_are_a_known_secret_key() -> None:
    checker = checked({"secrets": [secret(rotation_period="30d", agent_instructions={"summary": "ask the team"})]})
    assert checker.warnings == []


def test_azure_app_reg_is_a_static_under_secretzeros_other_name(tmp_path: Path) -> None:
    app = {"name": "app_reg", "kind": "azure_app_reg", "config": {"default": "${NOT_SET}"}}
    definition = load(tmp_path, {"secrets": [app]}, environ={"APP_REG": "client-secret-from-env"})
    generator = definition.secret("app_reg").units[0].generator
    assert (generator.kind, generator.unavailable, generator.config["default"]) == (
        "azure_app_reg", None, "client-secret-from-env")
    report = validate_document({"version": "1", "secrets": [{**app, "config": {}, "rotation_period": "30d"}]})
    (warning,) = report.warnings
    assert report.valid and "static value is not set" in warning and "secret 'app_reg'" in warning
