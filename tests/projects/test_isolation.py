"""A project's locks are its own: one project's held lockfile lock never holds up another's write."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from secretsapi.service.state.locks import lockfile_lock
from tests.factories import Project


@pytest.fixture
def default_locked(project: Project, settings: Any) -> Iterator[None]:
    """The default project's lockfile lock, held by another thread (as a long sync would)."""
    settings.SERVICE_LOCK_TIMEOUT = 0.3
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lockfile_lock(project.lockfile, timeout=5):
            taken.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert taken.wait(10)
    try:
        yield
    finally:
        release.set()
        holder.join(30)


def test_a_held_lock_in_one_project_leaves_anothers_sync_free(
    authed_api: APIClient, billing: Project, default_locked: None
) -> None:
    answer = authed_api.post("/projects/billing/sync", {}, format="json")
    assert answer.status_code == 200, answer.json()
    assert answer.json()["secrets_generated"] == ["stripe_key"]


def test_the_project_holding_its_lock_waits_for_it(
    authed_api: APIClient, billing: Project, default_locked: None
) -> None:
    assert authed_api.post("/sync", {}, format="json").status_code == 503


def test_a_worker_runs_as_many_write_runners_as_the_setting_says(settings: Any) -> None:
    from secretsapi import operations
    from secretsapi.management.commands.worker import runner_queues

    settings.SERVICE_JOB_WORKERS, settings.SERVICE_JOB_WRITE_WORKERS = 4, 2
    queues = [queue for _, queue in runner_queues()]
    assert queues == [operations.queue_name("writes")] * 2 + [operations.queue_name("reads")] * 2
