"""Shared fixtures: API clients that send the real header, and a known key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import TEST_KEY, Project


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








@pytest.fixture
def project(tmp_path: Path, settings: Any) -> Project:
    settings.SERVICE_CONFIG = tmp_path / "Secretfile.yml"
    settings.SERVICE_LOCKFILE = None
    settings.SERVICE_ALLOW_SCRIPTS = False
    return Project(tmp_path)
