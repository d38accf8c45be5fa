"""POST /config/validate: the report for valid and invalid definitions, malformed requests, audit."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, definition, file_secret, registered_providers

ERROR_BODY = {"error", "detail", "timestamp"}


def validate(client: APIClient, config: Any) -> Any:
    response = client.post("/config/validate", {"config": config}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def good_config() -> dict[str, Any]:
    return definition(
        file_secret("db_password", rotation_period="90d"),
        file_secret("api_key", kind="random_hex", rotation_period="30d", config={"length": 64}),
    )


def test_valid_config_is_valid_with_no_errors(authed_api: APIClient) -> None:
    body = validate(authed_api, good_config())
    assert set(body) == {"valid", "errors", "warnings"}
    assert (body["valid"], body["errors"]) == (True, [])
    assert isinstance(body["warnings"], list)


def test_fully_specified_config_has_no_warnings(authed_api: APIClient) -> None:
    assert validate(authed_api, good_config()) == {"valid": True, "errors": [], "warnings": []}


def test_missing_version_is_an_error(authed_api: APIClient) -> None:
    config = good_config()
    del config["version"]
    body = validate(authed_api, config)
    assert body["valid"] is False
    assert "Missing required field: version" in body["errors"]


def test_missing_secrets_is_an_error(authed_api: APIClient) -> None:
    body = validate(authed_api, {"version": "1.0"})
    assert body["valid"] is False
    assert "Missing required field: secrets" in body["errors"]


def test_missing_both_required_fields_reports_both(authed_api: APIClient) -> None:
    body = validate(authed_api, {})
    assert body["valid"] is False
    assert {"Missing required field: version", "Missing required field: secrets"} <= set(body["errors"])


def test_secret_without_rotation_period_is_a_warning_naming_it(authed_api: APIClient) -> None:
    body = validate(authed_api, definition(file_secret("db_password", rotation_period="90d"), file_secret("legacy")))
    assert (body["valid"], body["errors"]) == (True, [])
    assert len(body["warnings"]) == 1
    assert "legacy" in body["warnings"][0]


def test_invalid_rotation_period_is_an_error_naming_the_place(authed_api: APIClient) -> None:
    body = validate(authed_api, definition(file_secret("db", rotation_period="90x")))
    assert body["valid"] is False
    assert any("secrets[0].rotation_period" in error for error in body["errors"]), body["errors"]


@pytest.mark.parametrize("period", ["0d", "d", "90", "-5d", "1.5w", 90])
def test_other_malformed_rotation_periods_are_errors(authed_api: APIClient, period: Any) -> None:
    body = validate(authed_api, definition(file_secret("db", rotation_period=period)))
    assert body["valid"] is False
    assert any("secrets[0].rotation_period" in error for error in body["errors"]), body["errors"]


@pytest.mark.parametrize("period", ["1d", "2w", "3m", "1y", "90D"])
def test_every_rotation_period_unit_is_accepted(authed_api: APIClient, period: str) -> None:
    body = validate(authed_api, definition(file_secret("db", rotation_period=period)))
    assert (body["valid"], body["errors"]) == (True, [])


def test_unknown_generator_kind_is_a_warning_naming_the_secret(authed_api: APIClient) -> None:
    body = validate(authed_api, definition(file_secret("db", kind="quantum_password", rotation_period="30d")))
    assert body["valid"] is True, body["errors"]
    assert any(
        "quantum_password" in w and "secret 'db' will fail at sync" in w for w in body["warnings"]
    ), body["warnings"]


def test_duplicate_secret_names_are_an_error(authed_api: APIClient) -> None:
    body = validate(authed_api, definition(
        file_secret("db", rotation_period="30d"), file_secret("db", "out/other.env", rotation_period="30d"),
    ))
    assert body["valid"] is False
    assert any("duplicate" in error.lower() and "db" in error for error in body["errors"]), body["errors"]


def test_secret_without_name_or_kind_is_an_error(authed_api: APIClient) -> None:
    body = validate(authed_api, definition({"kind": "random_hex"}, {"name": "nokind"}))
    assert body["valid"] is False
    assert any("secrets[0].name" in error for error in body["errors"]), body["errors"]
    assert any("secrets[1].kind" in error for error in body["errors"]), body["errors"]


def test_unknown_top_level_key_is_a_warning_not_an_error(authed_api: APIClient) -> None:
    body = validate(authed_api, {**good_config(), "extras": {"owner": "ops"}})
    assert (body["valid"], body["errors"]) == (True, [])
    assert any("extras" in warning for warning in body["warnings"]), body["warnings"]


def test_invalid_definition_is_200_with_valid_false(authed_api: APIClient) -> None:
    response = authed_api.post("/config/validate", {"config": {"version": "1.0", "secrets": "nope"}}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is False and body["errors"]


def test_validation_reads_and_writes_no_files(authed_api: APIClient, project: Project) -> None:
    validate(authed_api, good_config())
    assert list(project.root.iterdir()) == []


# -- malformed requests ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "body", [{"config": ["version", "secrets"]}, {"config": "version: 1.0"}, {"config": None}, {}, [{"config": {}}]],
    ids=["config_list", "config_string", "config_null", "config_missing", "body_list"],
)
def test_config_that_is_not_an_object_is_400_with_the_error_body(authed_api: APIClient, body: Any) -> None:
    response = authed_api.post("/config/validate", body, format="json")
    assert response.status_code == 400
    assert set(response.json()) == ERROR_BODY
    assert "config" in response.json()["detail"]


def test_body_that_is_not_json_is_400_with_the_error_body(authed_api: APIClient) -> None:
    response = authed_api.generic("POST", "/config/validate", '{"config": {', content_type="application/json")
    assert response.status_code == 400
    assert set(response.json()) == ERROR_BODY


def test_non_json_content_type_is_415_with_the_error_body(authed_api: APIClient) -> None:
    response = authed_api.generic("POST", "/config/validate", '{"config": {}}', content_type="text/plain")
    assert response.status_code == 415
    assert set(response.json()) == ERROR_BODY


def test_validate_without_key_is_401(api: APIClient) -> None:
    response = api.post("/config/validate", {"config": good_config()}, format="json")
    assert response.status_code == 401
    assert set(response.json()) == ERROR_BODY
    assert "WWW-Authenticate" in response.headers


def test_validate_with_wrong_key_is_401(api: APIClient) -> None:
    api.credentials(HTTP_X_API_KEY="not-the-key")
    assert api.post("/config/validate", {"config": good_config()}, format="json").status_code == 401


# -- audit -----------------------------------------------------------------------------------


def test_validation_is_audited_against_config(authed_api: APIClient) -> None:
    config = good_config()
    del config["version"]
    validate(authed_api, config)
    row = AuditEntry.objects.get(action="validate_config")
    assert (row.resource, row.success, row.user) == ("config", True, "service")
    assert row.details["valid"] is False
    assert row.details["errors"] == 1


def test_validation_audit_never_holds_static_values(authed_api: APIClient) -> None:
    config = definition(file_secret("db", kind="static", rotation_period="30d", config={"value": "hunter2-static"}))
    validate(authed_api, config)
    row = AuditEntry.objects.get(action="validate_config")
    assert "hunter2-static" not in str(row.details)


def test_an_absolute_path_outside_the_configured_roots_is_an_error_naming_secret_and_target(
        authed_api: APIClient, settings: Any) -> None:
    settings.SERVICE_TARGET_ROOTS = ("/etc/app",)
    body = validate(authed_api, definition(file_secret("db", "/srv/app/.env"), file_secret("ok", "/etc/app/.env")))
    assert body["valid"] is False
    assert body["errors"] == ["secrets[0] 'db' targets[0] local/file config.path: path /srv/app/.env is outside the "
                              "allowed target roots (SERVICE_TARGET_ROOTS)"]


def test_absolute_paths_are_valid_in_a_submitted_document_when_no_roots_are_configured(
        authed_api: APIClient) -> None:
    assert validate(authed_api, definition(file_secret("db", "/srv/app/.env")))["errors"] == []


# -- definitions SecretZero accepts ------------------------------------------------------------


def _with_target(name: str, provider: str, kind: str, **config: Any) -> dict[str, Any]:
    secret = file_secret(name, rotation_period="30d")
    secret["targets"].append({"provider": provider, "kind": kind, "config": config or {"repo": "org/app"}})
    return secret


@pytest.mark.parametrize(("provider", "kind"), [("keeper", "keeper_record"), ("local", "sops_file"),
                                                ("azure_devops", "azdo_secure_file"), ("local", "ansible_vault_file")])
def test_an_unsupported_target_kind_is_a_warning_naming_the_kind_and_the_secret(
    authed_api: APIClient, provider: str, kind: str
) -> None:
    body = validate(authed_api, definition(_with_target("db", provider, kind)))
    assert body["valid"] is True, body["errors"]
    assert [w for w in body["warnings"] if f"target kind '{kind}' is not supported by this service" in w
            and "secret 'db' will not be written there" in w], body["warnings"]


def test_an_unsupported_generator_kind_of_secretzero_is_a_warning(authed_api: APIClient) -> None:
    body = validate(authed_api, definition(file_secret("token", kind="provider_backed", rotation_period="30d")))
    assert body["valid"] is True, body["errors"]
    assert ("secrets[0].kind: generator kind 'provider_backed' is not supported by this service: "
            "secret 'token' will fail at sync") in body["warnings"]


def test_undefined_variables_where_this_service_does_not_use_them_are_not_errors(authed_api: APIClient) -> None:
    secret = _with_target("db", "keeper", "keeper_record")
    secret["targets"][1]["config"]["repo"] = "${KEEPER_FOLDER}"
    secret["agent_instructions"] = {"steps": [{"params": {"code": "${DEVICE_CODE}"}}]}
    config = definition(secret, providers={"keeper": {"kind": "keeper", "auth": {"token": "${KEEPER_TOKEN}"}}})
    body = validate(authed_api, config)
    assert (body["valid"], body["errors"]) == (True, [])


def test_a_static_without_a_value_is_a_warning_naming_the_secret(authed_api: APIClient) -> None:
    secret = file_secret("pypi_token", kind="static", rotation_period="30d", config={"default": "${PYPI_TOKEN}"})
    body = validate(authed_api, definition(secret))
    assert body["valid"] is True, body["errors"]
    assert any("pypi_token" in w and "static value is not set" in w for w in body["warnings"]), body["warnings"]


def test_non_string_static_values_are_valid(authed_api: APIClient) -> None:
    secrets = [file_secret(f"s{i}", kind="static", rotation_period="30d", config={"value": value})
               for i, value in enumerate([True, 42, {"user": "app"}])]
    assert validate(authed_api, definition(*secrets))["errors"] == []


def test_policies_and_standards_not_checked_here_are_warnings(authed_api: APIClient) -> None:
    config = definition(file_secret("db", rotation_period="30d"), metadata={"compliance": ["security-best-practices"]},
                        policies={"ids": {"kind": "provider_identity"}, "bare": {"severity": "warning"}})
    body = validate(authed_api, config)
    assert body["errors"] == []
    assert len([w for w in body["warnings"] if "not checked by this service" in w]) == 3, body["warnings"]


def test_a_charset_of_characters_is_valid_with_a_warning(authed_api: APIClient) -> None:
    secret = file_secret("k", kind="random_string", rotation_period="30d", config={"charset": "abcdef0123-_"})
    body = validate(authed_api, definition(secret))
    assert body["errors"] == []
    assert any("alphanumeric is used" in w for w in body["warnings"])


@pytest.mark.parametrize("alias", ["kv", "kv2", "kv-v2", "kvv2"])
def test_vault_kind_aliases_are_supported_kinds(authed_api: APIClient, alias: str) -> None:
    body = validate(authed_api, definition(_with_target("db", "vault", alias, path="app/db")))
    assert body["errors"] == [] and not [w for w in body["warnings"] if "not supported" in w], body


def test_targets_sync_would_refuse_are_errors_each_naming_the_secret_and_the_target_position(
        authed_api: APIClient) -> None:
    db = file_secret("db", rotation_period="30d")
    db["targets"] += [{"provider": "local", "kind": "file", "config": {"format": "json"}},
                      {"provider": "vault", "kind": "kv2", "config": {"path": "app/db", "version": 3}},
                      {"provider": "myaws", "kind": "ssm_parameter", "config": {"name": "/app/db"}}]
    body = validate(authed_api, definition(file_secret("ok", rotation_period="30d"), db))
    assert body["valid"] is False
    assert body["errors"] == [
        "secrets[1] 'db' targets[1] local/file: config.path is required and must be a non-empty string",
        "secrets[1] 'db' targets[2] vault/kv2: config.version must be 1 or 2",
        "secrets[1] 'db' targets[3] myaws/ssm_parameter: provider 'myaws' is not declared in providers and is "
        f"not a provider kind ({registered_providers()})"]


def test_an_unknown_file_format_is_a_warning_that_the_target_fails_at_sync(authed_api: APIClient) -> None:
    body = validate(authed_api, definition(file_secret("db", "a.env", fmt="xml", rotation_period="30d")))
    assert body["valid"] is True
    assert body["warnings"] == ["secrets[0] 'db' targets[0] local/file: config.format 'xml' is not one of "
                                "dotenv, json, yaml, toml, tfvars: this target fails at sync"]


# -- what a sync would trip on: every kind's required settings (each from its declaration) ----------

def _target(type_: str, config: dict[str, Any]) -> dict[str, Any]:
    provider, _, kind = type_.partition("/")
    return {"provider": provider, "kind": kind, "config": config}


@pytest.mark.parametrize(("document", "named"), [
    ({"secrets": [{"name": "k", "kind": "uuid", "targets": [_target("vercel/vercel_env", {})]}]},
     "config.project_id is required"),
    ({"providers": {"azure": {"kind": "azure", "config": {}}},
      "secrets": [{"name": "k", "kind": "uuid", "targets": [_target("azure/azure_keyvault", {"secret_name": "k"})]}]},
     "config.vault_url or config.vault_name is required (in the target, or vault_url or vault_name in provider "
     "'azure')"),
    ({"providers": {"ansible_vault": {"kind": "ansible_vault", "auth": {"kind": "ambient"}}},
      "secrets": [{"name": "k", "kind": "uuid", "targets": [_target("ansible_vault/ansible_vault_file", {})]}]},
     "provider 'ansible_vault': vault_file is required"),
    ({"providers": {"git_crypt": {"kind": "git_crypt", "config": {"format": "yaml"}}},
      "secrets": [{"name": "k", "kind": "uuid", "targets": [_target("git_crypt/git_crypt_file", {})]}]},
     "provider 'git_crypt': secret_file is required"),
    ({"providers": {"vault": {"kind": "vault", "auth": {"kind": "approle", "config": {"role_id": "r"}}}},
      "secrets": [{"name": "k", "kind": "uuid", "targets": [_target("vault/vault_kv", {"path": "a"})]}]},
     "provider 'vault': auth kind approle needs secret_id"),
])
def test_a_setting_the_sync_would_trip_on_makes_the_definition_invalid_naming_it(
    authed_api: APIClient, document: dict[str, Any], named: str
) -> None:
    body = validate(authed_api, {"version": "1.0", **document})
    assert body["valid"] is False
    assert [error for error in body["errors"] if named in error], body["errors"]


def _required(type_: str) -> list[tuple[str, ...]]:
    """The settings (or groups of which one is needed) a target of ``type_`` cannot do without."""
    from secretsapi.service.targets import get_kind

    schema = get_kind(type_).schema
    return [(key,) for key, setting in schema.config.items() if setting.required] + [
        need.keys for need in schema.needs]


def _kinds() -> list[str]:
    from secretsapi.service.targets import kinds

    return [kind.type for kind in kinds()]


@pytest.mark.parametrize("type_", _kinds())
def test_every_kinds_required_settings_are_checked_by_validation(authed_api: APIClient, type_: str) -> None:
    from secretsapi.service.targets import get_kind
    from secretsapi.service.targets.registry import provider_kind

    example = dict(get_kind(type_).schema.example)
    provider = provider_kind(type_.partition("/")[0])
    providers = {type_.partition("/")[0]: {"config": dict(provider.example)}} if provider and provider.example else {}

    def document(config: dict[str, Any]) -> dict[str, Any]:
        return {"version": "1.0", "providers": providers,
                "secrets": [{"name": "k", "kind": "uuid", "targets": [_target(type_, config)]}]}

    assert validate(authed_api, document(example))["errors"] == []
    for keys in _required(type_):
        body = validate(authed_api, document({k: v for k, v in example.items() if k not in keys}))
        assert body["valid"] is False and any(f"config.{keys[0]}" in error for error in body["errors"]), (keys, body)
