"""The definition checker's rules: structure, values, warnings, interpolation, strict mode (/config/validate)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.loading.checker import DefinitionChecker
from secretsapi.service.validate import validate_document
from tests.factories import bare_secret as secret
from tests.factories import load_document as load
from tests.factories import load_errors

# What a period's error adds: the units a definition accepts (SecretZero's).
UNITS = (": write a whole number and a unit, d (days), w (weeks), m (months of 30 days) or y (years of 365 days), "
         "as in 90d")

# -- a consumed document ------------------------------------------------------------------------


def test_a_consumed_document_checks_like_a_kept_one_and_is_emptied(tmp_path: Path) -> None:
    doc = {"version": "1", "variables": {"env": "prod"},
           "secrets": [secret(name=f"s{i}", targets=[{"provider": "local", "kind": "file",
                                                      "config": {"path": "${env}.env"}}]) for i in range(3)]}
    kept = DefinitionChecker({}, strict=False).check(copy.deepcopy(doc))
    given = copy.deepcopy(doc)
    consumed = DefinitionChecker({}, strict=False).check(given, consume=True)
    assert consumed.secrets == kept.secrets
    assert consumed.variables == kept.variables
    assert given == {}


# -- structure and values ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([1, 2], "definition must be a mapping, got a list"),
        ("", "definition must be a mapping, got an empty document"),
        ({"secrets": {"a": 1}}, "secrets: must be a list"),
        ({"secrets": ["x"]}, "secrets[0]: must be a mapping"),
        ({"secrets": [{"kind": "uuid"}]}, "secrets[0].name: required"),
        ({"secrets": [{"name": 5, "kind": "uuid"}]}, "secrets[0].name: must be a string"),
        (
            {"secrets": [secret(name="a b")]},
            "secrets[0].name: 'a b' is not a valid name (letters, digits, '_', '.', '-')",
        ),
        (
            {"secrets": [secret(name="a"), secret(name="a")]},
            "secrets[1].name: duplicate secret name 'a' (first at secrets[0])",
        ),
        ({"secrets": [{"name": "a"}]}, "secrets[0].kind: required"),
        ({"secrets": [secret(kind="templates.nope")]}, "secrets[0].kind: unknown template 'nope'"),
        (
            {"secrets": [secret(rotation_period="90x")]},
            "secrets[0].rotation_period: '90x' is not a valid period" + UNITS,
        ),
        ({"secrets": [secret(rotation_period=90)]}, "secrets[0].rotation_period: 90 is not a valid period" + UNITS),
        ({"secrets": [secret(one_time="yes")]}, "secrets[0].one_time: must be true or false"),
        ({"secrets": [secret(config=[1])]}, "secrets[0].config: must be a mapping"),
        ({"secrets": [secret(description=3)]}, "secrets[0].description: must be a string"),
        ({"secrets": [secret(targets={"provider": "local"})]}, "secrets[0].targets: must be a list"),
        ({"secrets": [secret(targets=["x"])]}, "secrets[0].targets[0]: must be a mapping"),
        ({"secrets": [secret(targets=[{"kind": "file"}])]}, "secrets[0].targets[0].provider: required"),
        ({"secrets": [secret(targets=[{"provider": "local"}])]}, "secrets[0].targets[0].kind: required"),
        (
            {"secrets": [secret(targets=[{"provider": "local", "kind": "file", "config": "p"}])]},
            "secrets[0].targets[0].config: must be a mapping",
        ),
        ({"secrets": [secret(config={"length": 0})]}, "secrets[0].config.length: must be greater than zero"),
        ({"variables": [1]}, "variables: must be a mapping"),
        ({"providers": {"aws": {"kind": 3}}}, "providers.aws.kind: must be a string"),
        ({"providers": {"aws": {"auth": "x"}}}, "providers.aws.auth: must be a mapping"),
        (
            {"policies": {"p": {"kind": "access", "severity": "fatal"}}},
            "policies.p.severity: must be one of error, warning, info",
        ),
        (
            {"policies": {"p": {"kind": "access", "enabled": "no"}}},
            "policies.p.enabled: must be true or false",
        ),
        (
            {"policies": {"p": {"kind": "rotation", "max_age": "1q"}}},
            "policies.p.max_age: '1q' is not a valid period" + UNITS,
        ),
        (
            {"policies": {"p": {"kind": "access", "denied_targets": "file"}}},
            "policies.p.denied_targets: must be a list of target kinds",
        ),
        ({"metadata": {"compliance": "soc2"}}, "metadata.compliance: must be a list"),
        ({"version": ["1"]}, "version: must be a string"),
    ],
)
def test_each_problem_is_reported_at_its_place(tmp_path: Path, doc: Any, message: str) -> None:
    assert message in load_errors(tmp_path, doc)




def test_all_problems_are_reported_together(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, {"secrets": [secret(name="a b"), secret(rotation_period="x")]})
    assert len(errors) == 2


def test_yaml_only_values_like_sets_are_refused(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, "secrets:\n  - name: a\n    kind: uuid\n    config: !!set {x}\n")
    assert "secrets[0].config: unsupported value of type set" in errors


def test_non_string_keys_are_refused(tmp_path: Path) -> None:
    assert "variables: keys must be strings" in load_errors(tmp_path, "variables:\n  1: a\n  b: c\n")


def test_lowercased_compliance_standards(tmp_path: Path) -> None:
    definition = load(
        tmp_path,
        {
            "metadata": {"compliance": ["SOC2", "Iso27001"]},
            "policies": {"c": {"kind": "compliance", "standard": "ISO27001"}},
        },
    )
    assert definition.metadata["compliance"] == ["soc2", "iso27001"]
    assert definition.policies["c"].options == {"standard": "iso27001"}


def test_policy_defaults_are_error_severity_and_enabled(tmp_path: Path) -> None:
    policy = load(tmp_path, {"policies": {"p": {"kind": "access", "allowed_targets": ["file"]}}}).policies[
        "p"
    ]
    assert (policy.severity, policy.enabled, policy.options) == ("error", True, {"allowed_targets": ["file"]})


def test_provider_kind_defaults_to_its_alias(tmp_path: Path) -> None:
    definition = load(tmp_path, {"providers": {"aws": {"auth": {"kind": "env"}}, "prod": {"kind": "vault"}}})
    assert definition.providers["aws"].kind == "aws"
    assert definition.providers["aws"].auth == {"kind": "env"}
    assert definition.providers["prod"].kind == "vault"
    assert definition.providers["prod"].config == {}


# -- warnings ----------------------------------------------------------------------------------------


def test_unknown_top_level_keys_are_warnings(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [], "extras": {"a": 1}})
    assert definition.warnings == ("unknown top-level key 'extras' (kept, not used)",)


def test_unknown_secret_keys_are_warnings(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [secret(vault="x")]})
    assert "secrets[0]: unknown key 'vault' (ignored)" in definition.warnings


def test_unknown_generator_options_are_warnings(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [secret(config={"prompt_on_empty": False})]})
    assert (
        "secrets[0].config: unknown option 'prompt_on_empty' for random_string (ignored)"
        in definition.warnings
    )


# -- interpolation in definitions -----------------------------------------------------------------


def test_single_expression_config_values_keep_their_type(tmp_path: Path) -> None:
    definition = load(
        tmp_path, {"variables": {"len": 16}, "secrets": [secret(config={"length": "{{ var.len }}"})]}
    )
    assert definition.secret("s").config == {"length": 16}


def test_environment_values_fill_dollar_names(tmp_path: Path) -> None:
    doc = {
        "secrets": [
            secret(
                targets=[{"provider": "local", "kind": "file", "config": {"path": "${OUT}/${NAME:-x}.env"}}]
            )
        ]
    }
    definition = load(tmp_path, doc, environ={"OUT": "/srv"})
    assert definition.secret("s").targets[0].config["path"] == "/srv/x.env"


def test_undefined_variable_names_the_place(tmp_path: Path) -> None:
    doc = {
        "secrets": [
            secret(
                targets=[
                    {"provider": "local", "kind": "file", "config": {"path": "a"}},
                    {"provider": "local", "kind": "file", "config": {"path": "{{ var.env }}"}},
                ]
            )
        ]
    }
    assert load_errors(tmp_path, doc) == ["secrets[0].targets[1].config.path: undefined variable 'env'"]


def test_variable_cycles_are_errors(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, {"variables": {"a": "{{ var.b }}", "b": "{{ var.a }}"}})
    assert errors == ["variables.a: variable cycle a -> b -> a"]


def test_resolved_variables_are_exposed(tmp_path: Path) -> None:
    definition = load(tmp_path, {"variables": {"app": "shop", "full": "{{ var.app }}-x"}})
    assert definition.variables == {"app": "shop", "full": "shop-x"}


def test_unknown_top_level_sections_are_not_interpolated(tmp_path: Path) -> None:
    definition = load(tmp_path, {"extras": "{{ var.nope }}"})  # an undefined variable would raise
    assert definition.warnings == ("unknown top-level key 'extras' (kept, not used)",)


def test_interpolated_values_are_not_echoed_by_validation() -> None:
    report = validate_document(
        {"version": "1", "secrets": [secret(rotation_period="${LEAKY}")]}, environ={"LEAKY": "hunter2secret"}
    )
    assert report.errors == ["secrets[0].rotation_period: the interpolated value is not a valid period" + UNITS]


# -- POST /config/validate -----------------------------------------------------------------------


def test_validate_requires_version() -> None:
    assert validate_document({"secrets": []}, environ={}).errors == ["Missing required field: version"]


def test_validate_requires_secrets() -> None:
    assert validate_document({"version": "1.0"}, environ={}).errors == ["Missing required field: secrets"]


def test_validate_warns_about_secrets_without_rotation_period() -> None:
    report = validate_document({"version": "1", "secrets": [{"name": "api_key", "kind": "uuid"}]}, environ={})
    assert report.valid
    assert report.warnings == ["secrets[0] 'api_key': no rotation_period defined"]


def test_validate_reports_the_same_problems_as_the_loader() -> None:
    report = validate_document({"version": "1", "secrets": [secret(rotation_period="90x")]}, environ={})
    assert not report.valid
    assert report.errors == ["secrets[0].rotation_period: '90x' is not a valid period" + UNITS]


@pytest.mark.parametrize(
    "doc",
    [
        None,
        "text",
        3,
        [1],
        {"secrets": None},
        {"secrets": [None, 1, []]},
        {"version": {"a": 1}, "secrets": [{"name": ["x"], "kind": {"y": 1}}]},
        {"templates": {"t": {"fields": {"f": {"generator": "x"}}}}, "secrets": "s"},
        {"policies": {"p": {"kind": "compliance", "standard": ["soc2"]}}},
        {"metadata": {"compliance": [["x"]]}},
    ],
)
def test_validate_never_raises_for_bad_input(doc: Any) -> None:
    report = validate_document(doc, environ={})
    assert not report.valid
    assert report.errors
    assert "definition could not be checked" not in report.errors
