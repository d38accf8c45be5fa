"""Shared fixtures: API clients that send the real header, and a known key; jobs in-process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django_q.conf import Conf
from rest_framework.test import APIClient

from tests.factories import TEST_KEY, Project


@pytest.fixture(autouse=True, scope="session")
def _jobs_run_in_process() -> Iterator[None]:
    """Jobs run in the test's process as they are queued (django-q2's sync mode), so the API's
    tests see what a worker would do; tests/processes/ start real workers."""
    Conf.SYNC = True
    yield
    Conf.SYNC = False


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


@pytest.hookimpl(trylast=True)  # after any shuffling plugin: the order within each group is kept
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that start real processes first (stable otherwise): xdist's workers then share
    the long ones (a scheduler tick, the crash rounds, the fuzzer) from the start and finish
    on the short ones, instead of one worker starting a minute-long test as the others finish."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
