"""Webhooks and metrics in the job worker: job.failed, deliveries run by the worker, jobs counted."""

from __future__ import annotations

import socket
import subprocess
import sys
from typing import Any

import pytest
from django.utils import timezone
from django_q.models import Schedule
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from audit.recorder import begin
from jobs import runner, schedules
from jobs.models import Job
from tests.factories import Project, definition, file_secret
from tests.peers.webhook_receiver import webhook_receiver
from tests.webhooks.support import SECRET, endpoint, readme_verifier
from webhooks.models import Delivery
from webhooks.outbox import DELIVER

SYNC: dict[str, Any] = {"dry_run": False, "force": False, "secret_name": None, "var_files": [], "repair": False}


@pytest.fixture(autouse=True)
def _private_allowed(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True


def dead_worker() -> str:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True)
    return f"{socket.gethostname()}:{ended.stdout.strip()}"


@pytest.mark.slow
def test_a_job_that_ends_failed_raises_job_failed_with_its_end(db: None, project: Project) -> None:
    endpoint("http://127.0.0.1:9/", "job.failed")
    project.write(definition(file_secret("a")))
    row = begin(action="sync", resource="secrets", user="ci", details=dict(SYNC))
    job = Job.objects.create(operation="sync", actor="ci", params=SYNC, payload=SYNC, state=Job.RUNNING,
                             started_at=timezone.now(), attempts=1, worker=dead_worker(), audit_row=row)
    runner.recover()
    delivery = Delivery.objects.get()
    assert delivery.event == "job.failed"
    assert delivery.payload["data"] == {"job": str(job.pk), "operation": "sync", "requested_by": "ci",
                                        "status": 503, "error": "Service unavailable"}
    assert (delivery.payload["actor"], delivery.payload["audit_id"]) == ("ci", row)


def test_a_job_that_succeeds_raises_no_job_failed(authed_api: APIClient, project: Project) -> None:
    endpoint("http://127.0.0.1:9/", "job.failed")
    project.write(definition(file_secret("a")))
    response = authed_api.post("/sync", {"async": True}, format="json")
    assert response.status_code == 202
    assert Job.objects.get().state == "succeeded"
    assert not Delivery.objects.exists()


def test_the_worker_delivers_what_is_due_every_minute(db: None) -> None:
    schedules.install()
    row = Schedule.objects.get(name=schedules.WEBHOOKS)
    assert (row.func, row.schedule_type, row.minutes, row.repeats) == (DELIVER, Schedule.MINUTES, 1, -1)
    schedules.install()
    assert Schedule.objects.filter(name=schedules.WEBHOOKS).count() == 1


@pytest.mark.server
def test_an_event_is_sent_by_a_task_queued_when_its_operation_commits(
        authed_api: APIClient, project: Project, django_capture_on_commit_callbacks: Any) -> None:
    project.write(definition(file_secret("a")))
    with webhook_receiver() as receiver:
        endpoint(receiver.url, "sync.completed")
        # The tests' task engine runs a queued task at once, as an idle worker would.
        with django_capture_on_commit_callbacks(execute=True):
            assert authed_api.post("/sync", {}, format="json").status_code == 200
        assert len(receiver.received) == 1
        got = receiver.received[0]
    assert readme_verifier()(SECRET, got.headers["X-Signature"], got.body)
    assert Delivery.objects.get().state == "delivered"


def test_metrics_count_jobs_queued_and_running(authed_api: APIClient, project: Project) -> None:
    for state in (Job.QUEUED, Job.QUEUED, Job.RUNNING, Job.SUCCEEDED):
        Job.objects.create(operation="sync", actor="ci", params=SYNC, state=state)
    text = authed_api.get("/metrics").content.decode()
    (family,) = [f for f in text_string_to_metric_families(text) if f.name == "secretsapi_jobs"]
    assert {s.labels["state"]: s.value for s in family.samples} == {"queued": 2, "running": 1}
