"""A secret's status carries when it falls due: its period after its last rotation or creation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from secretsapi.service.rotation import execute_rotation
from secretsapi.service.status import secret_status
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import definition, file_secret

SYNCED_AT = datetime(2026, 1, 1, tzinfo=UTC)


def workspace(tmp_path: Path, **fields: Any) -> Workspace:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump(definition(file_secret("db", "out/app.env", **fields))))
    ws = Workspace(definition_path=path, environ={}, clock=lambda: SYNCED_AT)
    assert sync(ws).secrets_failed == []
    return ws


def test_the_due_date_is_the_period_after_creation(tmp_path: Path) -> None:
    ws = workspace(tmp_path, rotation_period="30d")
    assert secret_status(ws, "db").due_at == (SYNCED_AT + timedelta(days=30)).isoformat()


def test_the_due_date_follows_the_last_rotation(tmp_path: Path) -> None:
    ws = workspace(tmp_path, rotation_period="30d")
    later = SYNCED_AT + timedelta(days=40)
    execute_rotation(Workspace(definition_path=ws.definition_path, environ={}, clock=lambda: later))
    assert secret_status(ws, "db").due_at == (later + timedelta(days=30)).isoformat()


def test_one_time_secrets_and_secrets_without_a_period_have_no_due_date(tmp_path: Path) -> None:
    assert secret_status(workspace(tmp_path / "a", one_time=True, rotation_period="30d"), "db").due_at is None
    assert secret_status(workspace(tmp_path / "b"), "db").due_at is None
