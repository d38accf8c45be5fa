"""The last line of defence of render and validate: recorded values withheld from results and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from secretsapi.service.errors import DefinitionInvalid, VarFileInvalid
from secretsapi.service.recorded_values import WITHHELD, without_recorded_values
from secretsapi.service.results import ValidationReport
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace

VALUE = "p4ss'word-that-was-generated"
TEMPLATE_OUTPUT = "DB_PASSWORD=abc\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "Secretfile.yml").write_text("version: '1.0'\nsecrets: []\n")
    entry = {"hash": sha256_text(VALUE), "created_at": "2026-01-01T00:00:00+00:00",
             "targets": {"local/template/app": sha256_text(TEMPLATE_OUTPUT)}}
    (tmp_path / ".gitsecrets.lock").write_text(json.dumps({"version": "1.0", "secrets": {"db": entry}}))
    return Workspace(definition_path=tmp_path / "Secretfile.yml")


def test_a_recorded_value_is_withheld_wherever_it_sits_in_a_result(ws: Workspace) -> None:
    report = ValidationReport(valid=False, errors=[VALUE, f"secrets[0] path {VALUE!r} is refused"],
                              warnings=[TEMPLATE_OUTPUT])
    shown = without_recorded_values(ws, lambda: report)
    assert shown.errors == [WITHHELD, f'secrets[0] path "{WITHHELD}" is refused']
    assert shown.warnings == [WITHHELD]


def test_a_recorded_value_in_a_definition_error_is_withheld(ws: Workspace) -> None:
    def fail() -> None:
        raise DefinitionInvalid([f"secrets[0].config.path: {VALUE!r} is not a path", "other"])

    with pytest.raises(DefinitionInvalid) as raised:
        without_recorded_values(ws, fail)
    assert VALUE not in raised.value.message
    assert raised.value.errors == [f'secrets[0].config.path: "{WITHHELD}" is not a path', "other"]


def test_a_recorded_value_in_any_service_error_is_withheld(ws: Workspace) -> None:
    def fail() -> None:
        raise VarFileInvalid(f'variable file "{VALUE}" not found')

    with pytest.raises(VarFileInvalid) as raised:
        without_recorded_values(ws, fail)
    assert raised.value.message == f'variable file "{WITHHELD}" not found'


def test_what_the_caller_sent_is_not_withheld(ws: Workspace) -> None:
    shown = without_recorded_values(ws, lambda: {"a": VALUE, "b": [VALUE]}, sent={"guess": VALUE})
    assert shown == {"a": VALUE, "b": [VALUE]}


def test_a_number_whose_text_is_a_recorded_value_is_withheld(tmp_path: Path) -> None:
    (tmp_path / "Secretfile.yml").write_text("version: '1.0'\nsecrets: []\n")
    entry = {"hash": sha256_text("83810205"), "created_at": "2026-01-01T00:00:00+00:00"}
    (tmp_path / ".gitsecrets.lock").write_text(json.dumps({"version": "1.0", "secrets": {"pin": entry}}))
    ws = Workspace(definition_path=tmp_path / "Secretfile.yml")
    assert without_recorded_values(ws, lambda: {"pin": 83810205, "n": 5}) == {"pin": WITHHELD, "n": 5}
