"""A job whose worker died never stays running: run again when it wrote nothing, else failed,
with its operation's audit row completed (never a second row)."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from audit.models import AuditEntry
from audit.recorder import begin
from jobs import runner
from jobs.models import Job
from tests.factories import Project, definition, file_secret

SYNC: dict[str, Any] = {"dry_run": False, "force": False, "secret_name": None, "var_files": [], "repair": False}


def dead_worker() -> str:
    """host:pid of a process of this host that has ended."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True)
    return f"{socket.gethostname()}:{ended.stdout.strip()}"


def running(operation: str, payload: dict[str, Any], **fields: Any) -> Job:
    return Job.objects.create(operation=operation, actor="ci", params=payload, payload=payload, state=Job.RUNNING,
                              started_at=timezone.now(), attempts=1, **fields)


@pytest.mark.slow
def test_a_job_whose_worker_died_before_it_wrote_anything_is_run_again(db: None, project: Project) -> None:
    project.write(definition(file_secret("a")))
    job = running("sync", SYNC, worker=dead_worker())
    runner.recover()
    job.refresh_from_db()
    assert (job.state, job.attempts, job.status_code) == ("succeeded", 2, 200)
    assert job.result is not None and job.result["secrets_generated"] == ["a"]


@pytest.mark.slow
def test_a_write_whose_worker_died_after_it_began_ends_failed_and_completes_its_audit_row(
    db: None, project: Project
) -> None:
    project.write(definition(file_secret("a")))
    row = begin(action="sync", resource="secrets", user="ci", details=dict(SYNC))
    job = running("sync", SYNC, worker=dead_worker(), audit_row=row)
    runner.recover()
    job.refresh_from_db()
    assert (job.state, job.status_code, job.payload) == ("failed", 503, None)
    assert job.result is not None and set(job.result) == {"error", "detail", "timestamp"}
    assert "drift check" in job.result["detail"]
    entry = AuditEntry.objects.get()
    assert (entry.pk, entry.success, entry.details["error"]) == (row, False, "worker_died")
    assert "state" not in entry.details


@pytest.mark.slow
def test_a_job_run_twice_already_is_not_run_a_third_time(db: None, project: Project) -> None:
    project.write(definition(file_secret("a")))
    job = running("sync", SYNC, worker=dead_worker())
    Job.objects.filter(pk=job.pk).update(attempts=runner.MAX_ATTEMPTS)
    runner.recover()
    job.refresh_from_db()
    assert (job.state, job.status_code) == ("failed", 503)
    assert not project.lockfile.exists()


def test_a_job_of_a_live_worker_is_left_running(db: None, project: Project) -> None:
    job = running("sync", SYNC, worker=runner.worker_name())
    assert runner.recover() == []
    job.refresh_from_db()
    assert job.state == "running"


def test_a_job_of_another_host_is_ended_only_once_past_the_job_timeout(
    db: None, project: Project, settings: Any
) -> None:
    project.write(definition(file_secret("a")))
    settings.SERVICE_JOB_TIMEOUT = 60
    job = running("check_drift", {"secret_name": None, "var_files": []}, worker="elsewhere:1")
    assert runner.recover() == []
    Job.objects.filter(pk=job.pk).update(started_at=timezone.now() - timedelta(seconds=121))
    assert [j.pk for j in runner.recover()] == [job.pk]
    job.refresh_from_db()
    assert job.state == "succeeded"


def test_a_second_delivery_of_a_job_s_task_does_not_run_it_again(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("a")))
    authed_api.post("/sync", {}, format="json")
    job = Job.objects.get()
    runner.run_job(str(job.pk))
    job.refresh_from_db()
    assert job.attempts == 1
    assert AuditEntry.objects.filter(action="sync").count() == 1
