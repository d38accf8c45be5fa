"""Every refused authenticated request leaves one failed audit row naming the status and a reason."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import LOCAL_HOST, Project, definition, file_secret


def refusal() -> AuditEntry:
    (row,) = AuditEntry.objects.filter(action="request_refused")
    return row


@pytest.fixture
def defined(project: Project) -> Project:
    return project.write(definition(file_secret("db", kind="uuid")))


def test_a_body_that_fails_validation_writes_a_422_row_without_the_body(
    authed_api: APIClient, defined: Project
) -> None:
    response = authed_api.post("/sync", {"secret_name": ["hunter2-looks-secret"]}, format="json")
    assert response.status_code == 422
    row = refusal()
    assert (row.resource, row.user, row.success) == ("/sync", "service", False)
    assert row.details == {"status": 422, "reason": "invalid", "method": "POST"}
    assert "hunter2" not in str(row.details) and "hunter2" not in row.resource


def test_malformed_json_writes_a_400_row(authed_api: APIClient, defined: Project) -> None:
    response = authed_api.post("/sync", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert refusal().details == {"status": 400, "reason": "parse_error", "method": "POST"}


def test_an_unsupported_media_type_writes_a_415_row(authed_api: APIClient, defined: Project) -> None:
    response = authed_api.post("/sync", "dry_run=true", content_type="text/plain")
    assert response.status_code == 415
    assert refusal().details == {"status": 415, "reason": "unsupported_media_type", "method": "POST"}


def test_an_oversized_body_writes_a_413_row(authed_api: APIClient, defined: Project, settings: Any) -> None:
    settings.SERVICE_MAX_BODY_BYTES = 10
    response = authed_api.post("/sync", {"dry_run": True, "force": False}, format="json")
    assert response.status_code == 413
    row = refusal()
    assert (row.resource, row.details) == ("/sync", {"status": 413, "reason": "body_too_large", "method": "POST"})


def test_an_unknown_endpoint_writes_a_404_row(authed_api: APIClient) -> None:
    assert authed_api.get("/no/such/endpoint").status_code == 404
    row = refusal()
    assert (row.resource, row.user) == ("/no/such/endpoint", "service")
    assert row.details == {"status": 404, "reason": "no_endpoint", "method": "GET"}


def test_an_unknown_endpoint_without_a_valid_key_writes_no_row(api: APIClient) -> None:
    assert api.get("/no/such/endpoint").status_code == 404
    assert api.get("/no/such/endpoint", HTTP_X_API_KEY="wrong").status_code == 404
    assert not AuditEntry.objects.exists()


def test_a_refused_request_without_a_key_keeps_only_its_authenticate_row(api: APIClient, defined: Project) -> None:
    assert api.post("/sync", {"dry_run": "sometimes"}, format="json").status_code == 401
    assert list(AuditEntry.objects.values_list("action", flat=True)) == ["authenticate"]


def test_an_operation_that_audited_its_own_404_gets_no_second_row(authed_api: APIClient, defined: Project) -> None:
    assert authed_api.post("/sync", {"secret_name": "nope"}, format="json").status_code == 404
    (row,) = AuditEntry.objects.all()
    assert (row.action, row.success, row.details["error"]) == ("sync", False, "secret_not_defined")


def test_an_operation_that_audited_its_own_403_gets_no_second_row(authed_api: APIClient, defined: Project) -> None:
    assert authed_api.get("/secrets/db").status_code == 403
    assert list(AuditEntry.objects.values_list("action", flat=True)) == ["read_secret_value"]


@pytest.mark.usefixtures("undeclared_var_files")
def test_a_var_file_outside_the_folder_is_one_failed_row(authed_api: APIClient, defined: Project) -> None:
    assert authed_api.post("/sync", {"var_files": ["../x.yml"]}, format="json").status_code == 400
    (row,) = AuditEntry.objects.all()
    assert (row.action, row.success) == ("sync", False)


def test_in_insecure_mode_a_refusal_is_a_row_of_nobody(db: None, insecure: None, defined: Project) -> None:
    assert APIClient(HTTP_HOST=LOCAL_HOST).post("/sync", {"dry_run": "sometimes"}, format="json").status_code == 422
    row = refusal()
    assert (row.user, row.details["status"]) == (None, 422)
