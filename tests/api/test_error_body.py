"""Every error status answers with the one error body {error, detail, timestamp}."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from secretsapi.actions import auditlog
from tests.asserts import assert_error_body


def test_unknown_url_is_404_with_error_body(authed_api: APIClient) -> None:
    assert_error_body(authed_api.get("/no/such/path"), 404)


def test_trailing_slash_is_not_an_alias(authed_api: APIClient) -> None:
    assert_error_body(authed_api.get("/health/"), 404)


def test_wrong_method_is_405_with_error_body(authed_api: APIClient) -> None:
    assert_error_body(authed_api.delete("/audit/logs"), 405)


def test_401_has_error_body(api: APIClient) -> None:
    assert_error_body(api.get("/audit/logs"), 401)


def test_422_has_error_body(authed_api: APIClient) -> None:
    assert_error_body(authed_api.get("/audit/logs?limit=5000"), 422)


def test_unhandled_exception_is_500_without_its_text(
    authed_api: APIClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(**kwargs: object) -> None:
        raise RuntimeError("internal detail s3cr3t-value")

    monkeypatch.setattr(auditlog, "read_audit_logs", explode)
    body = assert_error_body(authed_api.get("/audit/logs"), 500)
    assert "s3cr3t" not in body["detail"]
    assert "Traceback" in caplog.text or any(r.exc_info for r in caplog.records)


def test_oversized_body_is_413(authed_api: APIClient, settings) -> None:  # type: ignore[no-untyped-def]
    settings.SERVICE_MAX_BODY_BYTES = 100
    response = authed_api.generic("POST", "/audit/logs", "x" * 200, content_type="application/json")
    assert_error_body(response, 413)
