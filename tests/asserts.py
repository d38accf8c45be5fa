"""Assertions shared by test packages."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def assert_error_body(response: Any, status: int) -> Any:
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error", "detail", "timestamp"}
    assert body["error"] and body["detail"]
    datetime.fromisoformat(body["timestamp"])
    return body
