"""The X-API-Key header: missing, wrong, right, case, query string and insecure mode."""

from __future__ import annotations

from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import LOCAL_HOST, TEST_KEY


def test_missing_key_is_401_with_www_authenticate_and_error_body(api: APIClient) -> None:
    response = api.get("/audit/logs")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'ApiKey header="X-API-Key"'
    assert set(response.json()) == {"error", "detail", "timestamp"}


def test_wrong_key_is_401_with_www_authenticate(api: APIClient) -> None:
    response = api.get("/audit/logs", HTTP_X_API_KEY="wrong")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("ApiKey")
    assert response.json()["error"] == "Unauthorized"


def test_right_key_is_accepted(authed_api: APIClient) -> None:
    assert authed_api.get("/audit/logs").status_code == 200


def test_header_name_is_matched_whatever_its_case_on_the_wire(api: APIClient) -> None:
    # HTTP header names are case-insensitive on the wire; WSGI folds them to HTTP_X_API_KEY.
    response = api.generic("GET", "/audit/logs", headers={"x-api-key": TEST_KEY})
    assert response.status_code == 200


def test_key_in_query_string_never_authenticates(api: APIClient) -> None:
    for name in ("api_key", "X-API-Key", "key", "apikey"):
        assert api.get(f"/audit/logs?{name}={TEST_KEY}").status_code == 401


def test_insecure_mode_accepts_requests_without_a_key(db: None, insecure: None) -> None:
    assert APIClient(HTTP_HOST=LOCAL_HOST).get("/audit/logs").status_code == 200


def test_failed_attempt_is_audited_without_the_presented_key(api: APIClient) -> None:
    api.post("/audit/logs", HTTP_X_API_KEY="not-the-key-123")
    row = AuditEntry.objects.get(action="authenticate")
    assert row.success is False
    assert row.details == {"reason": "invalid", "method": "POST", "path": "/audit/logs", "client": "127.0.0.1",
                           "minute": row.timestamp.strftime("%Y-%m-%dT%H:%MZ"), "count": 1}
    assert "not-the-key-123" not in str(row.details)


def test_missing_key_attempt_is_audited_as_missing(api: APIClient) -> None:
    api.get("/audit/logs")
    assert AuditEntry.objects.get(action="authenticate").details["reason"] == "missing"


def test_successful_attempt_is_audited_through_the_operation_row(authed_api: APIClient) -> None:
    authed_api.get("/audit/logs")
    row = AuditEntry.objects.get(action="read_audit_logs")
    assert row.user == "service"


def test_insecure_mode_audits_a_null_user(db: None, insecure: None) -> None:
    APIClient(HTTP_HOST=LOCAL_HOST).get("/audit/logs")
    assert AuditEntry.objects.get(action="read_audit_logs").user is None


def test_public_endpoints_need_no_key(api: APIClient) -> None:
    for path in ("/", "/health", "/openapi.json", "/docs", "/redoc"):
        assert api.get(path).status_code == 200, path
