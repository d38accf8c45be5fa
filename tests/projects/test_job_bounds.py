"""A project's jobs are bounded (SERVICE_JOBS_PER_PROJECT): one busy project cannot fill the server's
queue and starve the others, and the scheduler's ticks are never refused by the bound."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from rest_framework.test import APIClient

from apikeys import keys
from jobs import queue, schedules
from jobs.models import Schedule
from secretsapi import operations
from tests import inline_jobs
from tests.factories import Project


def client(key: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_X_API_KEY=key)
    return api


@pytest.fixture
def queued_only(settings: Any) -> Iterator[None]:
    settings.SERVICE_INLINE_MAX_BYTES = 0
    with inline_jobs.queued_only():
        yield


@pytest.fixture
def bound_of_two(settings: Any, queued_only: None) -> None:
    settings.SERVICE_JOBS_PER_PROJECT = 2


def test_a_project_at_its_bound_is_refused_while_another_still_submits(
    authed_api: APIClient, billing: Project, api_key: str, bound_of_two: None
) -> None:
    # Two keys of billing's, so neither key's own bound (SERVICE_JOBS_PER_KEY, 8) is what refuses.
    first, second = (client(keys.create(name, ["read"], projects={"billing": ()}).key) for name in ("b1", "b2"))
    assert first.post("/projects/billing/drift/check", {"async": True}, format="json").status_code == 202
    assert second.post("/projects/billing/drift/check", {"async": True}, format="json").status_code == 202
    refused = second.post("/projects/billing/drift/check", {"async": True}, format="json")
    assert refused.status_code == 429
    assert set(refused.json()) == {"error", "detail", "timestamp"}
    detail = refused.json()["detail"]
    assert "too_many_jobs" in detail and "SERVICE_JOBS_PER_PROJECT" in detail and "'billing'" in detail
    assert int(refused["Retry-After"]) > 0
    assert authed_api.post("/drift/check", {"async": True}, format="json").status_code == 202  # the default one
    assert queue.active(project="billing") == 2 and queue.active(project="default") == 1


def test_the_default_projects_paths_are_bounded_as_a_project(authed_api: APIClient, billing: Project,
                                                             bound_of_two: None) -> None:
    for _ in range(2):
        assert authed_api.post("/drift/check", {"async": True}, format="json").status_code == 202
    refused = authed_api.post("/sync", {"async": True}, format="json")
    assert refused.status_code == 429 and "'default'" in refused.json()["detail"]
    assert authed_api.post("/projects/billing/sync", {"async": True}, format="json").status_code == 202


def test_a_jobs_end_frees_its_projects_place(authed_api: APIClient, billing: Project, settings: Any) -> None:
    settings.SERVICE_JOBS_PER_PROJECT = 1
    for _ in range(3):  # each runs and ends before the next
        assert authed_api.post("/projects/billing/sync", {"async": True}, format="json").status_code == 202


def test_a_scheduled_tick_queues_a_job_for_a_project_at_its_bound(authed_api: APIClient, billing: Project,
                                                                 bound_of_two: None) -> None:
    for _ in range(2):
        authed_api.post("/projects/billing/drift/check", {"async": True}, format="json")
    schedules.install()
    Schedule.objects.filter(name="drift").update(last_tick=timezone.now() - timedelta(days=2))
    assert schedules.due(operations.enqueue) == ["drift"]
    ticked = DBTaskResult.objects.filter(args_kwargs__kwargs__actor="scheduler")
    assert sorted(row.args_kwargs["kwargs"]["project"] for row in ticked) == ["billing", "default"]
    # The tick's job counts: the project is past its bound until its jobs end.
    assert queue.active(project="billing") == 3
    assert authed_api.post("/projects/billing/sync", {"async": True}, format="json").status_code == 429
