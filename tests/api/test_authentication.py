"""The key headers (X-API-Key, Authorization: Bearer): missing, wrong, right, malformed, both,
case, query string and insecure mode."""

from __future__ import annotations

from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import LOCAL_HOST, TEST_KEY, named_key


def test_missing_key_is_401_with_www_authenticate_and_error_body(api: APIClient) -> None:
    response = api.get("/audit/logs")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'ApiKey header="X-API-Key", Bearer realm="secretsapi"'
    assert "Authorization: Bearer" in response.json()["detail"]
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


def test_a_bearer_key_is_accepted_like_x_api_key_and_names_its_principal(api: APIClient) -> None:
    assert api.get("/audit/logs", HTTP_AUTHORIZATION=f"Bearer {TEST_KEY}").status_code == 200
    assert AuditEntry.objects.get(action="read_audit_logs").user == "service"


def test_a_named_key_as_bearer_keeps_its_name_and_scopes(api: APIClient) -> None:
    key = named_key("scraper", "metrics")
    assert api.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 200
    assert api.get("/audit/logs", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 403
    assert AuditEntry.objects.get(action="request_refused").user == "scraper"


def test_the_bearer_scheme_is_matched_whatever_its_case(api: APIClient) -> None:
    # RFC 9110 11.1: an authentication scheme is case-insensitive.
    for scheme in ("bearer", "BEARER", "Bearer"):
        assert api.get("/audit/logs", HTTP_AUTHORIZATION=f"{scheme} {TEST_KEY}").status_code == 200, scheme


def test_a_wrong_bearer_key_is_401_audited_as_invalid(api: APIClient) -> None:
    response = api.get("/audit/logs", HTTP_AUTHORIZATION="Bearer not-the-key-123")
    assert response.status_code == 401
    assert response.json()["detail"] == "Invalid API key."
    row = AuditEntry.objects.get(action="authenticate")
    assert row.details["reason"] == "invalid"
    assert "not-the-key-123" not in str(row.details)


def test_a_malformed_bearer_header_is_401_with_the_error_body_even_beside_a_right_key(api: APIClient) -> None:
    for value in ("Bearer", "Bearer ", f"Bearer {TEST_KEY} {TEST_KEY}", f"Bearer {TEST_KEY}\u00e9"):
        for extra in ({}, {"X-API-Key": TEST_KEY}):
            response = api.get("/audit/logs", headers={"Authorization": value, **extra})
            assert response.status_code == 401, (value, extra)
            assert set(response.json()) == {"error", "detail", "timestamp"}
            assert response.json()["detail"].startswith("Malformed Authorization header")
            assert response["WWW-Authenticate"].startswith("ApiKey")
    assert {row.details["reason"] for row in AuditEntry.objects.filter(action="authenticate")} == {"malformed"}


def test_both_headers_naming_the_same_key_are_accepted(api: APIClient) -> None:
    response = api.get("/audit/logs", HTTP_X_API_KEY=TEST_KEY, HTTP_AUTHORIZATION=f"Bearer {TEST_KEY}")
    assert response.status_code == 200


def test_both_headers_naming_different_keys_are_refused_even_when_each_is_valid(api: APIClient) -> None:
    other = named_key("reader", "audit")
    for x_api_key, bearer in ((TEST_KEY, other), (other, TEST_KEY), (TEST_KEY, "wrong-key")):
        response = api.get("/audit/logs", HTTP_X_API_KEY=x_api_key, HTTP_AUTHORIZATION=f"Bearer {bearer}")
        assert response.status_code == 401
        assert "different keys" in response.json()["detail"]
    assert {row.details["reason"] for row in AuditEntry.objects.filter(action="authenticate")} == {"conflicting"}
    assert not AuditEntry.objects.filter(action="read_audit_logs").exists()


def test_an_authorization_header_of_another_scheme_is_not_read(api: APIClient) -> None:
    # A proxy's Basic credentials travel on beside the key: not a key, not a conflict.
    basic = "Basic dXNlcjpwYXNz"
    assert api.get("/audit/logs", HTTP_X_API_KEY=TEST_KEY, HTTP_AUTHORIZATION=basic).status_code == 200
    assert api.get("/audit/logs", HTTP_AUTHORIZATION=basic).status_code == 401
    assert api.get("/audit/logs", HTTP_AUTHORIZATION=TEST_KEY).status_code == 401


def test_insecure_mode_accepts_a_malformed_bearer_header(db: None, insecure: None) -> None:
    client = APIClient(HTTP_HOST=LOCAL_HOST)
    assert client.get("/audit/logs", HTTP_AUTHORIZATION="Bearer").status_code == 200


def test_a_request_no_view_handles_names_the_bearer_keys_principal(api: APIClient) -> None:
    assert api.get("/no/such/endpoint", HTTP_AUTHORIZATION=f"Bearer {TEST_KEY}").status_code == 404
    assert AuditEntry.objects.get(action="request_refused").user == "service"


def test_a_request_no_view_handles_with_conflicting_keys_names_nobody(api: APIClient) -> None:
    response = api.get("/no/such/endpoint", HTTP_X_API_KEY=TEST_KEY, HTTP_AUTHORIZATION="Bearer another-key-42")
    assert response.status_code == 404
    assert not AuditEntry.objects.exists()
