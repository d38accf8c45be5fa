"""Webhooks per project: a subscription names its projects; a project's paths list its own."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Project
from webhooks.models import Delivery


@pytest.fixture(autouse=True)
def _private_allowed(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True  # the test's addresses are loopback


def test_a_webhook_of_one_project_gets_that_projects_events_only(authed_api: APIClient, billing: Project) -> None:
    added = authed_api.post("/projects/billing/webhooks", {"url": "http://127.0.0.1:9/x",
                                                           "events": ["sync.completed"]}, format="json")
    assert added.status_code == 201, added.json()
    assert added.json()["projects"] == ["billing"]
    authed_api.post("/sync", {}, format="json")
    authed_api.post("/projects/billing/sync", {}, format="json")
    assert [d.payload["project"] for d in Delivery.objects.all()] == ["billing"]


def test_a_projects_webhook_list_shows_its_endpoints_only(authed_api: APIClient, billing: Project) -> None:
    authed_api.post("/webhooks", {"url": "http://127.0.0.1:9/all"}, format="json")
    authed_api.post("/projects/billing/webhooks", {"url": "http://127.0.0.1:9/b"}, format="json")
    listed = authed_api.get("/projects/billing/webhooks").json()["webhooks"]
    assert [w["url"] for w in listed] == ["http://127.0.0.1:9/b"]
    assert authed_api.get("/webhooks").json()["count"] == 2


def test_a_projects_failed_job_reaches_its_projects_webhook(authed_api: APIClient, billing: Project) -> None:
    authed_api.post("/projects/billing/webhooks", {"url": "http://127.0.0.1:9/b", "events": ["job.failed"]},
                    format="json")
    billing.write("secrets: [unclosed")
    authed_api.post("/projects/billing/sync", {"async": True}, format="json")
    assert [(d.event, d.payload["project"]) for d in Delivery.objects.all()] == [("job.failed", "billing")]
