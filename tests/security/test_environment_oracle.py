"""The environment as an oracle (issue 25, point 1): submitted text (a validated document, render
variables) is interpolated against a marked environment, so no answer varies with a value of the
server's environment, the service key included."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Project, definition, file_secret, named_key


def _read_client() -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=named_key("reader", "read"))
    return client


def _guesses(variable: str) -> dict[str, Any]:
    """One fake secret per guess of the fourth character, as the attacker sent them: a guess
    that is right leaves its rotation period valid, a wrong one makes it an error."""
    secrets = [{"name": f"g{c}", "kind": "random_password",
                "rotation_period": f"{{{{ '30d' if var.k[3]=='{c}' else 'bad' }}}}"} for c in "abcxyz"]
    return {"version": "1.0", "variables": {"k": "${" + variable + "}"}, "secrets": secrets}


def _validate(client: APIClient, monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> bytes:
    monkeypatch.setenv(name, value)
    response = client.post("/config/validate", {"config": _guesses(name)}, format="json")
    assert response.status_code == 200, response.content
    return bytes(response.content)


def test_validate_reports_are_byte_identical_whatever_the_environment_holds(
    db: None, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _read_client()
    first = _validate(client, monkeypatch, "SERVICE_API_KEY", "abcx-first-key")
    second = _validate(client, monkeypatch, "SERVICE_API_KEY", "abcz-second-key")
    assert first == second


def test_a_validated_environment_value_is_never_quoted(
    db: None, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("H25_TOKEN", "h25-hidden-value")
    doc = {"version": "1.0", "secrets": [{"name": "db", "kind": "random_password",
                                          "rotation_period": "${H25_TOKEN}"}]}
    response = _read_client().post("/config/validate", {"config": doc}, format="json")
    assert b"h25-hidden" not in response.content
    assert response.json()["valid"] is False


def test_a_default_still_applies_when_the_name_is_not_set(
    db: None, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("H25_UNSET", raising=False)
    doc = {"version": "1.0", "secrets": [{"name": "db", "kind": "random_password",
                                          "rotation_period": "${H25_UNSET:-30d}"}]}
    report = _read_client().post("/config/validate", {"config": doc}, format="json").json()
    assert report["valid"] is True, report


def _render(client: APIClient, monkeypatch: pytest.MonkeyPatch, value: str) -> bytes:
    monkeypatch.setenv("SERVICE_API_KEY", value)
    variables = {"k": "${SERVICE_API_KEY}", "period": "{{ '30d' if var.k[3]=='x' else 'bad' }}"}
    response = client.post("/config/render", {"variables": variables}, format="json")
    return bytes(response.content).split(b'"timestamp"')[0]


def test_render_answers_are_identical_whatever_the_environment_holds(
    db: None, api_key: str, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write(definition({**file_secret("db", "out/app.env"), "rotation_period": "{{ var.period }}"},
                             variables={"period": "30d"}))
    client = _read_client()
    assert _render(client, monkeypatch, "abcx-first-key") == _render(client, monkeypatch, "abcz-second-key")
