"""Shared fixtures: API clients that send the real header, and a known key; jobs in-process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests import inline_jobs
from tests.factories import TEST_KEY, Project


@pytest.fixture(autouse=True, scope="session")
def _jobs_run_in_process() -> Iterator[None]:
    """Jobs run in the test's process as they are queued (tests/inline_jobs.py), so the API's
    tests see what a worker would do; tests/processes/ start real workers."""
    inline_jobs.run_in_process()
    yield
    inline_jobs.stop_running()


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
    """The tests that start real processes (``slow``) first. xdist's ``worksteal`` gives the
    first worker the head of the collection and lets the others steal the tails of its queue:
    the long tests (a scheduler tick, the crash rounds, the fuzzer) then start at once instead
    of last, while the other workers run the short ones beside them. (Spreading the long ones
    over every worker's share was slower: 317 s against 290 s, three workers of process tests
    at once on 2 cores.)"""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
