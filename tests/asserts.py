"""Assertions shared by test packages."""

from __future__ import annotations

import json
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


def assert_not_shown(response: Any, value: str) -> None:
    """``value`` appears in the response body neither as it is nor as JSON escapes it (a
    generated value holding a quote or a backslash is escaped in the body)."""
    text = response.content.decode()
    assert value not in text
    assert json.dumps(value, ensure_ascii=False)[1:-1] not in text
    assert json.dumps(value)[1:-1] not in text


def recorded_atomic_writes(monkeypatch: Any) -> list[Any]:
    """Every path atomic_files.atomic_write writes from now on (it still writes), in order."""
    from secretsapi.service.util import atomic_files

    calls: list[Any] = []
    real = atomic_files.atomic_write

    def recording(path: Any, data: bytes, **kwargs: Any) -> None:
        calls.append(path)
        real(path, data, **kwargs)

    monkeypatch.setattr(atomic_files, "atomic_write", recording)
    return calls
