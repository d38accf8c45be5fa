"""``secretsctl audit``'s table, local or ``--addr``: PROJECT is the service's project the row ran
in, the one a key is confined to; DEFINITION the definition's own name for it."""

from __future__ import annotations

from typing import Any

from secretsapi.cli import auditrows

ROW: dict[str, Any] = {"timestamp": "2026-11-28T15:19:53.440109Z", "user": "ci-beta", "action": "sync",
                       "resource": "secrets", "environment": None, "origin": "client:127.0.0.1", "outcome": "ok"}


def columns(**row: Any) -> dict[str, str]:
    return dict(zip(auditrows.HEADER, auditrows.cells({**ROW, **row}), strict=True))


def test_a_rows_project_is_the_service_project_not_the_definitions_metadata_project() -> None:
    found = columns(project="payments", definition_project="shop", definition="/srv/payments/Secretfile.yml")
    assert (found["PROJECT"], found["DEFINITION"]) == ("payments", "shop")


def test_a_definition_without_a_metadata_project_is_named_by_its_file() -> None:
    found = columns(project="default", definition_project=None, definition="/srv/app/ci.yml")
    assert (found["PROJECT"], found["DEFINITION"]) == ("default", "ci.yml")


def test_a_row_of_no_definition_shows_a_dash_there() -> None:
    found = columns(project="payments", definition_project=None, definition=None)
    assert (found["PROJECT"], found["DEFINITION"]) == ("payments", "-")
