"""A job whose worker died never stays running: run again when it wrote nothing, else failed,
with its operation's audit row completed (never a second row). A worker is dead when its
heartbeat is six beats old, on any host."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import OperationalError
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from audit.models import AuditEntry
from audit.recorder import begin
from jobs import queue, recovery
from jobs.models import WorkerBeat
from secretsapi import operations
from secretsapi.management.commands import worker
from tests import inline_jobs
from tests.factories import Project, definition, file_secret

SYNC: dict[str, Any] = {"dry_run": False, "force": False, "secret_name": None, "var_files": [], "repair": False}


def claimed(operation: str, payload: dict[str, Any], *, seen_ago: float, audit_row: int | None = None,
            attempts: int = 1) -> str:
    """A job a worker took, that worker last seen ``seen_ago`` seconds ago (its row naming the job)."""
    with inline_jobs.queued_only():
        job = operations.enqueue(operation, payload, actor="ci")
    seen = timezone.now() - timedelta(seconds=seen_ago)
    wid = f"elsewhere:1:{operation}"
    WorkerBeat.objects.create(id=wid, host="elsewhere", pid=1, queue="q", started_at=seen, seen_at=seen,
                              job=job.id, audit_row=audit_row)
    DBTaskResult.objects.filter(pk=job.id).update(status="RUNNING", started_at=seen,
                                                  worker_ids=["earlier"] * (attempts - 1) + [wid])
    return job.id


def state(job_id: str) -> str:
    found = queue.find(job_id)
    assert found is not None
    return found.state


@pytest.mark.slow
def test_a_job_whose_worker_died_before_it_wrote_anything_is_run_again(db: None, project: Project) -> None:
    project.write(definition(file_secret("a")))
    job_id = claimed("sync", SYNC, seen_ago=3600)
    assert [(r.job, r.requeued) for r in recovery.recover()] == [(job_id, True)]
    assert state(job_id) == "queued"
    inline_jobs.run_queued(operations.queue_name("writes"))
    found = queue.find(job_id)
    assert found is not None and (found.state, found.result["secrets_generated"]) == ("succeeded", ["a"])
    assert len(DBTaskResult.objects.get(pk=job_id).worker_ids) == 2


@pytest.mark.slow
def test_a_write_whose_worker_died_after_it_began_ends_failed_and_completes_its_audit_row(
    db: None, project: Project
) -> None:
    project.write(definition(file_secret("a")))
    row = begin(action="sync", resource="secrets", user="ci", details=dict(SYNC))
    job_id = claimed("sync", SYNC, seen_ago=3600, audit_row=row)
    recovery.recover()
    found = queue.find(job_id)
    assert found is not None and found.state == "failed"
    assert found.failure is not None and found.failure["code"] == "worker_died"
    assert "drift check" in found.failure["message"]
    assert "payload" not in DBTaskResult.objects.get(pk=job_id).args_kwargs["kwargs"]
    entry = AuditEntry.objects.get()
    assert (entry.pk, entry.success, entry.details["error"]) == (row, False, "worker_died")
    assert "state" not in entry.details


@pytest.mark.slow
def test_a_job_run_twice_already_is_not_run_a_third_time(db: None, project: Project) -> None:
    project.write(definition(file_secret("a")))
    job_id = claimed("sync", SYNC, seen_ago=3600, attempts=recovery.MAX_ATTEMPTS)
    recovery.recover()
    assert state(job_id) == "failed"
    assert not project.lockfile.exists()


def test_a_job_of_a_live_worker_is_left_running(db: None, project: Project) -> None:
    job_id = claimed("sync", SYNC, seen_ago=1)
    assert recovery.recover() == []
    assert state(job_id) == "running"


def test_a_worker_is_dead_only_past_six_heartbeats(db: None, project: Project, settings: Any) -> None:
    settings.SERVICE_WORKER_HEARTBEAT_SECONDS = 10
    job_id = claimed("check_drift", {"secret_name": None, "var_files": []}, seen_ago=50)
    assert recovery.recover() == []
    WorkerBeat.objects.update(seen_at=timezone.now() - timedelta(seconds=61))
    assert [r.job for r in recovery.recover()] == [job_id]


def test_a_job_whose_worker_has_no_row_at_all_is_taken_back(db: None, project: Project) -> None:
    job_id = claimed("check_drift", {"secret_name": None, "var_files": []}, seen_ago=1)
    WorkerBeat.objects.all().delete()
    assert [r.job for r in recovery.recover()] == [job_id]
    assert state(job_id) == "queued"


def test_a_job_taken_back_and_claimed_again_is_not_taken_back_twice(db: None, project: Project) -> None:
    job_id = claimed("check_drift", {"secret_name": None, "var_files": []}, seen_ago=3600)
    stale = list(DBTaskResult.objects.filter(status="RUNNING"))
    recovery.recover()
    DBTaskResult.objects.filter(pk=job_id).update(status="RUNNING", started_at=timezone.now())
    # A second recovery that read the job before the first took it back finds it claimed anew.
    assert not recovery._take_back(stale[0], None, requeue=False)
    assert state(job_id) == "running"


def test_a_runner_that_failed_and_starts_again_gives_back_the_job_it_held(db: None, project: Project) -> None:
    job_id = claimed("check_drift", {"secret_name": None, "var_files": []}, seen_ago=1)
    assert recovery.recover() == []
    assert [(r.job, r.requeued) for r in recovery.recover(gone="elsewhere:1:check_drift")] == [(job_id, True)]
    assert WorkerBeat.objects.filter(id="elsewhere:1:check_drift").exists()  # the runner lives on


def test_a_runner_that_failed_with_the_database_away_takes_back_its_job_once_the_database_answers(
    db: None, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tried once while the database was still away, the job stayed running for good: the
    worker's heartbeat stays fresh, so no later recovery saw it dead."""
    job_id = claimed("check_drift", {"secret_name": None, "var_files": []}, seen_ago=1)
    real, tries = recovery.recover, []

    def away_twice(**kwargs: Any) -> list[recovery.Recovered]:
        tries.append(kwargs)
        if len(tries) <= 2:
            raise OperationalError("connection to server failed: database does not allow connections")
        return real(**kwargs)

    monkeypatch.setattr(recovery, "recover", away_twice)
    worker.take_back_held("elsewhere:1:check_drift", threading.Event(), pause=0)
    assert tries == [{"gone": "elsewhere:1:check_drift"}] * 3
    assert state(job_id) == "queued"

