"""A source-credential secret's declaration: a connection by name only, one user or two, a grace
period in the duration grammar; a connection the operator did not configure fails validation
naming the setting."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from secretsapi.service.credentials.spec import credential_spec
from secretsapi.service.definition.egress import egress_of
from secretsapi.service.validate import validate_workspace
from secretsapi.service.workspace import Workspace
from tests.factories import definition
from tests.service.credentials.sources import credential_secret


def _problems(config: dict[str, Any], kind: str = "postgres_user") -> list[str]:
    errors: list[str] = []
    credential_spec(kind, config, "secrets[0]", errors)
    return errors


def test_two_users_are_dual_phase_and_one_is_single_phase() -> None:
    errors: list[str] = []
    dual = credential_spec("postgres_user", {"connection": "main", "users": ["a", "b"]}, "s", errors)
    single = credential_spec("postgres_user", {"connection": "main", "user": "a"}, "s", errors)
    assert errors == [] and dual is not None and single is not None
    assert dual.dual and not single.dual


@pytest.mark.parametrize(("config", "expected"), [
    ({"connection": "postgres://admin:pw@db/app", "users": ["a", "b"]}, "config.connection"),
    ({"connection": "main", "users": ["a", "b"], "user": "a"}, "not both or neither"),
    ({"connection": "main"}, "not both or neither"),
    ({"connection": "main", "users": ["a", "a"]}, "two different users"),
    ({"connection": "main", "users": ["a", "b", "c"]}, "two different users"),
    ({"connection": "main", "user": "a; DROP ROLE x"}, "config.user"),
    ({"connection": "main", "user": "a", "grace_period": "5m"}, "config.grace_period"),
    ({"connection": "main", "user": "a", "host": "db"}, "unknown option 'host'"),
])
def test_a_bad_declaration_is_refused_naming_the_place(config: dict[str, Any], expected: str) -> None:
    problems = _problems(config)
    assert len(problems) == 1 and expected in problems[0] and problems[0].startswith("secrets[0]")


def test_an_iam_key_takes_one_user_whose_two_keys_take_turns() -> None:
    assert "two access keys take turns" in _problems({"connection": "k", "users": ["a", "b"]}, "aws_iam_key")[0]
    assert _problems({"connection": "k", "user": "deployer"}, "aws_iam_key") == []


def _workspace(tmp_path: Path, connections: dict[str, str]) -> Workspace:
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump(definition(credential_secret("postgres_user", ("app_a", "app_b")))))
    return replace(Workspace(definition_path=path, environ={}), egress=egress_of({}, {}, connections=connections))


def test_validation_names_the_setting_for_a_connection_that_is_not_configured(tmp_path: Path) -> None:
    report = validate_workspace(_workspace(tmp_path, {"other": "postgres://x@db/app"}))
    assert not report.valid
    assert report.errors == ["secrets[0].config.connection: connection 'main' is not configured (the operator "
                             "lists it in SERVICE_ROTATION_CONNECTIONS)"]


def test_validation_refuses_a_connection_of_another_kind(tmp_path: Path) -> None:
    report = validate_workspace(_workspace(tmp_path, {"main": "mysql://root@db/"}))
    assert not report.valid and "needs one of postgres, postgresql" in report.errors[0]


def test_validation_passes_with_the_connection_configured(tmp_path: Path) -> None:
    assert validate_workspace(_workspace(tmp_path, {"main": "postgres://x@db/app"})).valid


def test_the_generator_catalogue_lists_the_source_credential_kinds_with_their_options() -> None:
    from secretsapi.service.catalogue import generator_catalogue

    kinds = {entry["kind"]: {o["name"] for o in entry["options"]} for entry in generator_catalogue()}
    assert kinds["postgres_user"] == kinds["mysql_user"] == {"connection", "grace_period", "users", "user", "length"}
    assert kinds["aws_iam_key"] == {"connection", "grace_period", "user"}
