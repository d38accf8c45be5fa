"""Each target kind, provider kind and auth kind is declared once (``targets.schema``), and
everything said about its settings comes from that declaration: ``describe()`` and the discovery
endpoints, validation (what a write needs, by the target or its provider), the JSON Schemas and
the tables of docs/definitions.md. Checked for every registered kind, from its own declaration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # a dependency of schemathesis, without stubs
import pytest

from secretsapi.service.catalogue import provider_catalogue, target_catalogue
from secretsapi.service.definition.model import ProviderSpec, TargetSpec
from secretsapi.service.targets import TargetKind, kinds
from secretsapi.service.targets.base import Kind
from secretsapi.service.targets.registry import provider_kinds
from secretsapi.service.targets.schema import Setting
from secretsapi.service.targets.tables import generated

DOCS = Path(__file__).resolve().parents[3] / "docs" / "definitions.md"
# A value of another type than each setting type takes, for both validation and the JSON Schema.
WRONG = {"string": 5, "boolean": "yes", "integer": "two", "number": "five", "array": 5, "object": 5, "path": 5,
         "string|integer": True}
KINDS = {kind.type: kind for kind in kinds()}


def _validator(schema: dict[str, Any]) -> Any:
    return jsonschema.Draft202012Validator(schema)


def _errors(kind: TargetKind, config: dict[str, Any], providers: dict[str, ProviderSpec] | None = None) -> list[str]:
    provider, _, name = kind.type.partition("/")
    return kind.validate(TargetSpec(provider, name, config), "here", providers or {})


def _strict(kind: TargetKind) -> list[tuple[str, Setting]]:
    return [(key, setting) for key, setting in kind.schema.config.items() if setting.strict]


def test_every_kind_derives_from_its_declaration_under_a_declared_provider_kind() -> None:
    declared = {provider.kind for provider in provider_kinds()}
    for kind in kinds():
        assert isinstance(kind, Kind) and isinstance(kind, TargetKind)
        assert kind.schema.type == kind.type
        assert kind.describe() == kind.schema.describe()
        assert kind.type.partition("/")[0] in declared, kind.type
    assert {entry["type"]: entry["schema"] for entry in target_catalogue()} == {
        kind.type: kind.schema.json_schema() for kind in kinds()}


def test_every_provider_kind_offers_targets_and_lists_its_auth_kinds() -> None:
    for entry in provider_catalogue():
        assert entry["targets"], entry["kind"]
        _validator(entry["schema"]).validate({"kind": entry["kind"], "config": {}, "auth": {}})


def test_every_json_schema_is_a_valid_2020_12_schema() -> None:
    for kind in kinds():
        jsonschema.Draft202012Validator.check_schema(kind.schema.json_schema())
    for provider in provider_kinds():
        jsonschema.Draft202012Validator.check_schema(provider.json_schema())


@pytest.mark.parametrize("type_", sorted(KINDS))
def test_the_example_config_is_valid_to_both_the_schema_and_validation(type_: str) -> None:
    kind = KINDS[type_]
    example = dict(kind.schema.example)
    assert _validator(kind.schema.json_schema()).is_valid(example)
    assert _errors(kind, example) == []


@pytest.mark.parametrize("type_", sorted(KINDS))
def test_each_required_setting_left_out_is_an_error_naming_it_in_both(type_: str) -> None:
    kind = KINDS[type_]
    for key, setting in kind.schema.config.items():
        if not setting.required:
            continue
        config = {k: v for k, v in kind.schema.example.items() if k != key}
        assert not _validator(kind.schema.json_schema()).is_valid(config), (type_, key)
        assert any(f"config.{key}" in error for error in _errors(kind, config)), (type_, key)


@pytest.mark.parametrize("type_", sorted(KINDS))
def test_a_value_of_the_wrong_type_is_an_error_naming_it_in_both(type_: str) -> None:
    kind = KINDS[type_]
    for key, setting in _strict(kind):
        config = {**kind.schema.example, key: WRONG[setting.type]}
        assert not _validator(kind.schema.json_schema()).is_valid(config), (type_, key)
        assert any(f"config.{key}" in error for error in _errors(kind, config)), (type_, key)


@pytest.mark.parametrize("type_", sorted(KINDS))
def test_a_setting_a_write_needs_may_come_from_the_provider_and_else_is_an_error(type_: str) -> None:
    kind = KINDS[type_]
    provider_kind, _, _ = type_.partition("/")
    for need in kind.schema.needs:
        config = {k: v for k, v in kind.schema.example.items() if k not in need.keys}
        (error,) = [e for e in _errors(kind, config) if need.keys[0] in e]
        assert error.startswith(f"here: config.{need.keys[0]}") and "is required" in error
        if need.provider:
            given = ProviderSpec(provider_kind, provider_kind, {}, {need.provider[0]: "from-the-provider"})
            assert _errors(kind, config, {provider_kind: given}) == []


def test_a_provider_kind_lacking_a_required_setting_or_what_its_auth_kind_needs_is_named() -> None:
    for provider in provider_kinds():
        assert provider.problems(provider.example, None, "p") == [], provider.kind
        for key in (k for k, s in {**provider.config, **provider.auth_config}.items() if s.required):
            settings = {k: v for k, v in provider.example.items() if k != key}
            assert provider.problems(settings, None, "p") == [f"p: {key} is required"]
        for auth in provider.auth_kinds:
            for key in auth.requires:
                assert f"p: auth kind {auth.name} needs {key}" in provider.problems(provider.example, auth.name, "p")


def test_the_docs_tables_are_the_declarations() -> None:
    text = DOCS.read_text()
    assert generated(text) == text, "run: python -m secretsapi.service.targets.tables, and paste its tables"
