"""Assertions shared by test packages."""

from __future__ import annotations

from datetime import datetime


def assert_error_body(response, status: int) -> dict:  # type: ignore[no-untyped-def]
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error", "detail", "timestamp"}
    assert body["error"] and body["detail"]
    datetime.fromisoformat(body["timestamp"])
    return body
