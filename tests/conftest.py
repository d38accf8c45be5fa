"""Shared fixtures: API clients that send the real header, and a known key; engine processes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from secretsapi import engine_processes
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


@pytest.fixture
def engine_pool(settings: Any) -> Iterator[None]:
    """Long operations run in an engine process, as in a served worker (tests run them in-process
    otherwise). The process sees the test's files, not its monkeypatched modules or environment."""
    settings.SERVICE_ENGINE_PROCESSES = 1
    engine_processes.start()
    yield
    engine_processes.stop()


@pytest.fixture(autouse=True, scope="session")
def _every_engine_call_in_a_process() -> Iterator[None]:
    """``TEST_ENGINE_PROCESSES=1 pytest tests/api/...``: the same tests with every long operation
    in an engine process, to show that the API behaves identically either way."""
    if os.environ.get("TEST_ENGINE_PROCESSES") != "1":
        yield
        return
    engine_processes.start()
    yield
    engine_processes.stop()
