"""A target path built from the server's environment (issue 18, point 11): sync, rotation and
drift answers and their audit rows name it by its expression (``${NAME}``), never its value."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, definition, file_secret

HIDDEN = "/opt/h1-hidden-host-folder"


@pytest.fixture
def outside(project: Project, monkeypatch: pytest.MonkeyPatch, settings: Any) -> Project:
    """Two secrets whose paths come from the environment (directly and through a variable) and
    fall outside the target roots, so sync fails them with a message naming the path. The
    operator lets definitions read the variable (SERVICE_DEFINITION_ENV)."""
    settings.SERVICE_DEFINITION_ENV = ("H1_*",)
    monkeypatch.setenv("H1_SECRET_DIR", HIDDEN)
    return project.write(definition(
        file_secret("db", "${H1_SECRET_DIR}/app.env"),
        file_secret("api", "{{ var.folder }}/api.env"),
        variables={"folder": "${H1_SECRET_DIR}"},
    ))


def test_sync_errors_and_their_audit_row_name_the_expression(authed_api: APIClient, outside: Project) -> None:
    response = authed_api.post("/sync", {}, format="json")
    assert response.status_code == 200
    assert HIDDEN.encode() not in response.content
    errors = response.json()["errors"]
    assert [e["target"] for e in errors] == ["local/file/${H1_SECRET_DIR}/app.env",
                                             "local/file/${H1_SECRET_DIR}/api.env"]
    assert errors[0]["message"] == ("path ${H1_SECRET_DIR}/app.env is outside the allowed target roots "
                                    "(SERVICE_TARGET_ROOTS)")
    row = AuditEntry.objects.get(action="sync")
    assert HIDDEN not in json.dumps(row.details)
    assert row.details["errors"] == errors


def test_agent_sync_and_rotation_name_the_expression(authed_api: APIClient, outside: Project) -> None:
    for path in ("/agent/sync", "/rotation/execute"):
        response = authed_api.post(path, {"force": True}, format="json")
        assert HIDDEN.encode() not in response.content, path
    assert not any(HIDDEN in json.dumps(row.details) for row in AuditEntry.objects.all())


def test_drift_findings_name_the_expression(authed_api: APIClient, outside: Project) -> None:
    response = authed_api.post("/drift/check", {}, format="json")
    assert HIDDEN.encode() not in response.content
    assert response.json()["details"][0]["details"]["path"] == "${H1_SECRET_DIR}/app.env"


def test_a_path_from_a_variable_default_is_shown_as_written(
    authed_api: APIClient, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only what the environment answered is hidden: a default written in the definition is not.
    monkeypatch.delenv("H1_UNSET_DIR", raising=False)
    project.write(definition(file_secret("db", "${H1_UNSET_DIR:-/opt/written-default}/app.env")))
    errors = authed_api.post("/sync", {}, format="json").json()["errors"]
    assert errors[0]["target"] == "local/file//opt/written-default/app.env"
