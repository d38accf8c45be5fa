"""Shared fixtures: API clients that send the real header, and a known key."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

TEST_KEY = "test-key-4f1b9d0c6a2e"


@pytest.fixture
def api_key(settings: Any) -> str:
    settings.SERVICE_API_KEY = TEST_KEY
    return TEST_KEY


@pytest.fixture
def insecure(settings: Any) -> None:
    settings.SERVICE_API_KEY = None


@pytest.fixture
def api(db: None, api_key: str) -> APIClient:
    """A client with no key, against a server that requires one."""
    return APIClient()


@pytest.fixture
def authed_api(db: None, api_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=api_key)
    return client


class Project:
    """A definition file in a temporary folder, configured as the service's SERVICE_CONFIG."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.definition = root / "Secretfile.yml"
        self.lockfile = root / ".gitsecrets.lock"

    def write(self, document: dict[str, Any] | str) -> Project:
        text = document if isinstance(document, str) else yaml.safe_dump(document, sort_keys=False)
        self.definition.write_text(text)
        return self

    def lock(self) -> dict[str, Any]:
        return json.loads(self.lockfile.read_text())

    def save_lock(self, data: dict[str, Any]) -> None:
        self.lockfile.write_text(json.dumps(data, indent=2))

    def backdate(self, name: str, days: int) -> None:
        """Pretend ``name`` was created (and last rotated, if ever) ``days`` days ago."""
        data = self.lock()
        when = (datetime.now(UTC) - timedelta(days=days)).isoformat()
        entry = data["secrets"][name]
        entry["created_at"] = entry["updated_at"] = when
        if entry.get("last_rotated"):
            entry["last_rotated"] = when
        self.save_lock(data)


def file_secret(name: str, path: str = "out/app.env", *, kind: str = "random_password", fmt: str | None = None,
                **fields: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"path": path}
    if fmt:
        config["format"] = fmt
    return {"name": name, "kind": kind, "targets": [{"provider": "local", "kind": "file", "config": config}], **fields}


def definition(*secrets: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"version": "1.0", "secrets": list(secrets), **top}


@pytest.fixture
def project(tmp_path: Path, settings: Any) -> Project:
    settings.SERVICE_CONFIG = tmp_path / "Secretfile.yml"
    settings.SERVICE_LOCKFILE = None
    settings.SERVICE_ALLOW_SCRIPTS = False
    return Project(tmp_path)
