"""Every completed operation has its audit row; when the row cannot be written, the operation
fails loudly (500 with the error body) instead of completing unrecorded."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.asserts import assert_error_body
from tests.factories import Project, definition, file_secret

OPERATIONS = [
    ("post", "/sync", {}, "sync"),
    ("post", "/sync", {"force": True}, "sync"),
    ("post", "/agent/sync", {"force": True}, "agent_sync"),
    ("post", "/rotation/execute", {"force": True}, "execute_rotation"),
    ("post", "/rotation/check", {}, "check_rotation"),
    ("post", "/drift/check", {}, "check_drift"),
    ("post", "/policy/check", {}, "check_policy"),
    ("post", "/config/validate", {"config": {"version": "1", "secrets": []}}, "validate_config"),
    ("get", "/secrets", None, "list_secrets"),
    ("get", "/secrets/db/status", None, "get_secret_status"),
]


@pytest.fixture
def synced(authed_api: APIClient, project: Project) -> Project:
    project.write(definition(file_secret("db", "out/app.env", rotation_period="30d"),
                             file_secret("api", "out/app.env", kind="random_hex")))
    assert authed_api.post("/sync", {}, format="json").status_code == 200
    return project


def refuse_audit_writes() -> None:
    """The database itself refuses every new or completed audit row from now on (the test's
    transaction drops the triggers again), whatever code path writes them."""
    with connection.cursor() as cursor:
        for event in ("INSERT", "UPDATE"):
            cursor.execute(
                f"CREATE TRIGGER refuse_audit_{event.lower()} BEFORE {event} ON audit_auditentry "
                "BEGIN SELECT RAISE(ABORT, 'disk I/O error (audit table)'); END"
            )


def call(api: APIClient, method: str, path: str, body: Any) -> Any:
    return api.post(path, body, format="json") if method == "post" else api.get(path)


@pytest.mark.parametrize(("method", "path", "body", "action"), OPERATIONS)
def test_a_completed_operation_has_exactly_one_audit_row(
    authed_api: APIClient, synced: Project, method: str, path: str, body: Any, action: str
) -> None:
    before = AuditEntry.objects.count()
    response = call(authed_api, method, path, body)
    assert response.status_code == 200
    rows = list(AuditEntry.objects.order_by("-id")[: AuditEntry.objects.count() - before])
    assert [(row.action, row.success, row.user) for row in rows] == [(action, True, "service")]


@pytest.mark.parametrize(("method", "path", "body", "action"), OPERATIONS)
def test_an_audit_write_failure_makes_the_operation_fail_loudly(
    authed_api: APIClient, synced: Project, caplog: pytest.LogCaptureFixture,
    method: str, path: str, body: Any, action: str,
) -> None:
    refuse_audit_writes()
    response = call(authed_api, method, path, body)
    error = assert_error_body(response, 500)
    assert "disk I/O" not in error["detail"]  # never str(exc) to the client
    assert "disk I/O error" in caplog.text  # but the server log has it


def test_a_failed_operation_is_audited_as_a_failure(authed_api: APIClient, synced: Project) -> None:
    response = authed_api.post("/sync", {"secret_name": "missing"}, format="json")
    assert_error_body(response, 404)
    row = AuditEntry.objects.order_by("-id").first()
    assert row is not None and (row.action, row.success, row.details["error"]) == ("sync", False, "secret_not_defined")


# Forced: on the synced project these write every target.
CHANGING = [op for op in OPERATIONS if op[2] == {"force": True}]


@pytest.mark.parametrize(("method", "path", "body", "action"), CHANGING)
def test_a_changing_operation_has_its_row_before_it_writes_a_target(
    authed_api: APIClient, synced: Project, monkeypatch: pytest.MonkeyPatch,
    method: str, path: str, body: Any, action: str,
) -> None:
    from secretsapi.service.state import value_store

    seen: list[tuple[str, bool, Any]] = []
    original = value_store._write_targets

    def look_first(*args: Any) -> Any:
        row = AuditEntry.objects.order_by("-id").first()
        assert row is not None
        seen.append((row.action, row.success, row.details.get("state")))
        return original(*args)

    monkeypatch.setattr(value_store, "_write_targets", look_first)
    before = AuditEntry.objects.count()
    assert call(authed_api, method, path, body).status_code == 200
    assert seen == [(action, False, "started")]
    rows = list(AuditEntry.objects.order_by("-id")[: AuditEntry.objects.count() - before])
    assert len(rows) == 1 and rows[0].success is True and "state" not in rows[0].details


@pytest.mark.parametrize(("method", "path", "body", "action"), CHANGING)
def test_a_refused_intent_row_stops_the_operation_before_it_writes_anything(
    authed_api: APIClient, synced: Project,
    method: str, path: str, body: Any, action: str,
) -> None:
    files = {p: p.read_bytes() for p in synced.root.rglob("*") if p.is_file() and not p.name.endswith(".lck")}
    refuse_audit_writes()
    assert_error_body(call(authed_api, method, path, body), 500)
    after = {p: p.read_bytes() for p in synced.root.rglob("*") if p.is_file() and not p.name.endswith(".lck")}
    assert after == files


def test_a_failure_to_complete_the_row_answers_500_and_leaves_it_marked_started(
    transactional_db: None, authed_api: APIClient, synced: Project
) -> None:
    # Autocommit, as in production: the refused update must not undo the committed row.
    with connection.cursor() as cursor:  # new rows are accepted, completing them is not
        cursor.execute("CREATE TRIGGER refuse_audit_update BEFORE UPDATE ON audit_auditentry "
                       "BEGIN SELECT RAISE(ABORT, 'disk I/O error (audit table)'); END")
    try:
        assert_error_body(authed_api.post("/sync", {"force": True}, format="json"), 500)
    finally:
        with connection.cursor() as cursor:  # a flush empties tables but keeps triggers
            cursor.execute("DROP TRIGGER refuse_audit_update")
    row = AuditEntry.objects.order_by("-id").first()
    assert row is not None and (row.action, row.success, row.details["state"]) == ("sync", False, "started")
