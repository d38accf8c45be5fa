"""Webhooks and metrics in the job worker: job.failed, deliveries sent by the worker, jobs counted."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from audit.recorder import begin
from jobs import recovery
from jobs.models import WorkerBeat
from secretsapi import operations
from secretsapi.management.commands.worker import _deliveries
from tests import inline_jobs
from tests.factories import Project, definition, file_secret
from tests.peers.webhook_receiver import webhook_receiver
from tests.webhooks.support import SECRET, endpoint, readme_verifier
from webhooks.models import Delivery

SYNC: dict[str, Any] = {"dry_run": False, "force": False, "secret_name": None, "var_files": [], "repair": False}


@pytest.fixture(autouse=True)
def _private_allowed(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True


def test_a_job_whose_worker_died_mid_write_raises_job_failed_with_its_reason(db: None, project: Project) -> None:
    endpoint("http://127.0.0.1:9/", "job.failed")
    project.write(definition(file_secret("a")))
    row = begin(action="sync", resource="secrets", user="ci", details=dict(SYNC))
    with inline_jobs.queued_only():
        job = operations.enqueue("sync", SYNC, actor="ci")
    long_ago = timezone.now() - timedelta(hours=1)
    WorkerBeat.objects.create(id="gone", host="h", pid=1, queue="q", started_at=long_ago, seen_at=long_ago,
                              job=job.id, audit_row=row)
    DBTaskResult.objects.filter(pk=job.id).update(status="RUNNING", started_at=long_ago, worker_ids=["gone"])
    recovery.recover()
    delivery = Delivery.objects.get()
    assert delivery.event == "job.failed"
    assert delivery.payload["data"] == {"job": job.id, "operation": "sync", "requested_by": "ci",
                                        "error": "worker_died", "message": recovery.WORKER_DIED}
    assert (delivery.payload["actor"], delivery.payload["audit_id"]) == ("ci", row)


def test_a_job_whose_operation_failed_raises_job_failed(authed_api: APIClient, project: Project) -> None:
    endpoint("http://127.0.0.1:9/", "job.failed")
    project.write(definition(file_secret("a")))
    assert authed_api.post("/sync", {"secret_name": "nosuch", "async": True}, format="json").status_code == 202
    data = Delivery.objects.get().payload["data"]
    assert (data["operation"], data["error"]) == ("sync", "secret_not_defined")
    assert "nosuch" in data["message"]


def test_a_job_that_succeeds_raises_no_job_failed(authed_api: APIClient, project: Project) -> None:
    endpoint("http://127.0.0.1:9/", "job.failed")
    project.write(definition(file_secret("a")))
    response = authed_api.post("/sync", {"async": True}, format="json")
    assert response.status_code == 202
    assert DBTaskResult.objects.get().status == "SUCCESSFUL"
    assert not Delivery.objects.exists()


@pytest.mark.server
def test_the_worker_sends_the_deliveries_that_are_due(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("a")))
    with webhook_receiver() as receiver:
        endpoint(receiver.url, "sync.completed")
        assert authed_api.post("/sync", {}, format="json").status_code == 200
        stop = threading.Event()
        stop.set()  # one pass
        _deliveries(stop)
        assert len(receiver.received) == 1
        got = receiver.received[0]
    assert readme_verifier()(SECRET, got.headers["X-Signature"], got.body)
    assert Delivery.objects.get().state == "delivered"


def test_metrics_count_jobs_queued_and_running(authed_api: APIClient, project: Project) -> None:
    with inline_jobs.queued_only():
        for _ in range(3):
            operations.enqueue("sync", SYNC, actor="ci")
    DBTaskResult.objects.filter(pk=DBTaskResult.objects.first().pk).update(status="RUNNING")  # type: ignore[union-attr]
    text = authed_api.get("/metrics").content.decode()
    (family,) = [f for f in text_string_to_metric_families(text) if f.name == "secretsapi_jobs"]
    assert {s.labels["state"]: s.value for s in family.samples} == {"queued": 2, "running": 1}
