"""POST /sync, /rotation/execute and /drift/check with a postgres_user secret: the operator's
connection comes from SERVICE_ROTATION_CONNECTIONS, the audit row names the phase that failed, and
no credential reaches a response, an audit row, the lockfile or the logs."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from psycopg import sql
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, definition
from tests.processes.live import postgres_admin_url
from tests.service.credentials.sources import connects, credential_secret, postgres_users

pytestmark = pytest.mark.postgres


def _post(client: APIClient, path: str, body: dict[str, Any] | None = None) -> Any:
    response = client.post(path, body or {}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_service_rotates_with_the_operators_connection_and_leaks_no_credential(
    authed_api: APIClient, project: Project, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    admin = postgres_admin_url()
    settings.SERVICE_ROTATION_CONNECTIONS = {"main": admin}
    with postgres_users() as (a, b):
        project.write(definition(credential_secret("postgres_user", (a, b))))
        assert _post(authed_api, "/sync")["secrets_generated"] == ["db"]
        first = json.loads((project.root / "app.json").read_text())["db"]
        body = _post(authed_api, "/rotation/execute", {"force": True, "secret_name": "db"})
        assert body["rotated"] == ["db"]
        second = json.loads((project.root / "app.json").read_text())["db"]
        assert connects(admin, first) and connects(admin, second)
        assert _post(authed_api, "/drift/check")["has_drift"] is False
        seen = " ".join([json.dumps(body), project.lockfile.read_text(), caplog.text,
                         *(json.dumps(e.details) for e in AuditEntry.objects.all())])
        for value in (first, second):
            assert json.loads(value)["password"] not in seen


def test_a_failed_phase_is_named_in_the_rotations_audit_row(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    admin = postgres_admin_url()
    settings.SERVICE_ROTATION_CONNECTIONS = {"main": admin}
    with postgres_users() as (a, b):
        project.write(definition(credential_secret("postgres_user", (a, b))))
        _post(authed_api, "/sync")
        with psycopg.connect(admin, autocommit=True) as conn:  # b's next password will not log in
            conn.execute(sql.SQL("ALTER ROLE {} VALID UNTIL '2000-01-01'").format(sql.Identifier(b)))
        body = _post(authed_api, "/rotation/execute", {"force": True, "secret_name": "db"})
        assert body["failed"] == ["db"]
        row = AuditEntry.objects.filter(action="execute_rotation").latest("timestamp")
        assert row.success is False
        assert "phase 'verify' failed" in json.dumps(row.details)


def test_a_connection_the_operator_did_not_configure_is_named_by_validation(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    settings.SERVICE_ROTATION_CONNECTIONS = {"other": "postgres://x@db/app"}
    sent = definition(credential_secret("postgres_user", ("app_a", "app_b")))
    body = _post(authed_api, "/config/validate", {"config": sent})
    assert body["valid"] is False
    assert body["errors"] == ["secrets[0].config.connection: connection 'main' is not configured (the operator "
                              "lists it in SERVICE_ROTATION_CONNECTIONS)"]
