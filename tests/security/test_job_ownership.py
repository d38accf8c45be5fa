"""Jobs belong to whoever asked (issue 36, item 7), as the attacker ran it: a key read every other
key's jobs of its scope, results included (another key's render variables); jobs were kept
forever; nothing bounded the jobs queued; thirty 1 MiB async validations grew the database for
good. Now a job is its asker's (and an `admin` key's), kept SERVICE_JOB_RETENTION_DAYS, bounded
per key and in all (429 with Retry-After), and its request is cleared when it ends."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from rest_framework.test import APIClient

from jobs import queue
from tests import inline_jobs
from tests.factories import Project, definition, file_secret, named_key

ERROR_BODY = {"error", "detail", "timestamp"}


@pytest.fixture(autouse=True)
def _reads_are_jobs(settings: Any) -> None:
    settings.SERVICE_INLINE_MAX_BYTES = 0


def client(key: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_X_API_KEY=key)
    return api


@pytest.fixture
def two_readers(authed_api: APIClient, project: Project) -> tuple[APIClient, APIClient]:
    project.write(definition(file_secret("a")))
    return client(named_key("alice", "read")), client(named_key("mallory", "read"))


@pytest.fixture
def queued_only() -> Iterator[None]:
    with inline_jobs.queued_only():
        yield


def test_another_key_with_the_same_scope_cannot_read_a_job_or_its_result(
    two_readers: tuple[APIClient, APIClient]
) -> None:
    alice, mallory = two_readers
    job = alice.post("/config/render", {"variables": {"team_token_name": "x"}, "async": True}, format="json").json()
    assert alice.get(f"/jobs/{job['id']}").status_code == 200
    stolen = mallory.get(f"/jobs/{job['id']}")
    assert stolen.status_code == 404
    assert set(stolen.json()) == ERROR_BODY
    assert "team_token_name" not in stolen.content.decode()


def test_another_key_does_not_list_a_job_it_did_not_ask_for(two_readers: tuple[APIClient, APIClient]) -> None:
    alice, mallory = two_readers
    alice.post("/drift/check", {"async": True}, format="json")
    mallory.post("/policy/check", {"async": True}, format="json")
    assert [j["operation"] for j in mallory.get("/jobs").json()["jobs"]] == ["check_policy"]
    assert [j["operation"] for j in alice.get("/jobs").json()["jobs"]] == ["check_drift"]


def test_an_admin_key_sees_every_key_s_jobs_and_the_scheduler_s(
    two_readers: tuple[APIClient, APIClient], authed_api: APIClient
) -> None:
    alice, _ = two_readers
    job = alice.post("/drift/check", {"async": True}, format="json").json()
    auditor = client(named_key("auditor", "read", "write", "admin"))
    assert auditor.get(f"/jobs/{job['id']}").status_code == 200
    assert [j["actor"] for j in auditor.get("/jobs").json()["jobs"]] == ["alice"]
    assert [j["actor"] for j in authed_api.get("/jobs").json()["jobs"]] == ["alice"]  # SERVICE_API_KEY: every scope


def test_a_key_past_its_bound_of_jobs_waiting_is_refused_with_429_and_retry_after(
    two_readers: tuple[APIClient, APIClient], settings: Any, queued_only: None
) -> None:
    settings.SERVICE_JOBS_PER_KEY = 3
    alice, mallory = two_readers
    for _ in range(3):
        assert alice.post("/drift/check", {"async": True}, format="json").status_code == 202
    refused = alice.post("/drift/check", {"async": True}, format="json")
    assert refused.status_code == 429
    assert set(refused.json()) == ERROR_BODY
    assert "too_many_jobs" in refused.json()["detail"] and "SERVICE_JOBS_PER_KEY" in refused.json()["detail"]
    assert int(refused["Retry-After"]) > 0
    assert mallory.post("/drift/check", {"async": True}, format="json").status_code == 202  # another key's own bound
    assert DBTaskResult.objects.count() == 4


def test_every_key_together_is_bounded_by_the_server_s_limit(
    two_readers: tuple[APIClient, APIClient], settings: Any, queued_only: None
) -> None:
    settings.SERVICE_JOBS_MAX = 2
    alice, mallory = two_readers
    assert alice.post("/drift/check", {"async": True}, format="json").status_code == 202
    assert mallory.post("/drift/check", {"async": True}, format="json").status_code == 202
    refused = mallory.post("/drift/check", {"async": True}, format="json")
    assert refused.status_code == 429 and "SERVICE_JOBS_MAX" in refused.json()["detail"]
    assert refused["Retry-After"]


def test_a_job_that_ended_is_no_longer_counted_against_its_key(
    two_readers: tuple[APIClient, APIClient], settings: Any
) -> None:
    settings.SERVICE_JOBS_PER_KEY = 1
    alice, _ = two_readers
    for _ in range(3):  # each runs and ends before the next
        assert alice.post("/drift/check", {"async": True}, format="json").status_code == 202


def test_ended_jobs_are_pruned_after_the_retention_time(
    two_readers: tuple[APIClient, APIClient], settings: Any
) -> None:
    settings.SERVICE_JOB_RETENTION_DAYS = 7
    alice, _ = two_readers
    old = alice.post("/drift/check", {"async": True}, format="json").json()["id"]
    recent = alice.post("/drift/check", {"async": True}, format="json").json()["id"]
    DBTaskResult.objects.filter(pk=old).update(finished_at=timezone.now() - timedelta(days=8))
    assert queue.prune_ended() == 1
    assert alice.get(f"/jobs/{old}").status_code == 404
    assert alice.get(f"/jobs/{recent}").status_code == 200


def test_a_queued_job_is_never_pruned(two_readers: tuple[APIClient, APIClient], queued_only: None) -> None:
    alice, _ = two_readers
    job = alice.post("/drift/check", {"async": True}, format="json").json()["id"]
    DBTaskResult.objects.filter(pk=job).update(enqueued_at=timezone.now() - timedelta(days=30))
    assert queue.prune(timezone.now()) == 0


def _live_bytes() -> int:
    with connection.cursor() as cursor:
        pages = cursor.execute("PRAGMA page_count").fetchone()[0]
        free = cursor.execute("PRAGMA freelist_count").fetchone()[0]
        size = cursor.execute("PRAGMA page_size").fetchone()[0]
    return int((pages - free) * size)


@pytest.mark.thorough  # 30 MiB through the API: seconds by design
def test_thirty_large_async_validations_leave_no_request_in_the_database(
    two_readers: tuple[APIClient, APIClient], settings: Any
) -> None:
    if connection.vendor != "sqlite":
        pytest.skip("measures SQLite's pages")
    settings.SERVICE_JOBS_PER_KEY = 30
    alice, _ = two_readers
    filler = "x" * (1_048_576 - 4096)
    before = _live_bytes()
    for n in range(30):
        sent = {"version": "1.0", "secrets": [], "padding": f"{n}{filler}"}
        assert alice.post("/config/validate", {"config": sent, "async": True}, format="json").status_code == 202
    assert DBTaskResult.objects.count() == 30
    assert not any("payload" in row["kwargs"] for row in DBTaskResult.objects.values_list("args_kwargs", flat=True))
    # 30 MiB went through; what stays is each job's summary and result (a few KiB).
    assert _live_bytes() - before < 1_048_576
