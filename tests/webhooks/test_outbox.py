"""Events enter the outbox with the operation's audit row, one delivery per endpoint asking for them."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, definition, file_secret
from tests.webhooks.support import endpoint
from webhooks.models import Delivery

URL = "http://127.0.0.1:9/hook"


@pytest.fixture(autouse=True)
def _private_allowed(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True


def monthly(name: str) -> dict[str, Any]:
    return file_secret(name, "out/app.json", kind="random_hex", rotation_period="30d")


def test_a_sync_that_generates_writes_one_sync_event_naming_its_audit_row(authed_api: APIClient,
                                                                          project: Project) -> None:
    hook = endpoint(URL)
    project.write(definition(monthly("db"), monthly("api")))
    assert authed_api.post("/sync", {}, format="json").status_code == 200
    delivery = Delivery.objects.get()
    row = AuditEntry.objects.get(action="sync")
    assert (delivery.endpoint_id, delivery.event, delivery.state) == (hook.pk, "sync.completed", "pending")
    assert delivery.payload["audit_id"] == row.pk
    assert delivery.payload["data"]["generated"] == ["db", "api"]
    assert delivery.payload["actor"] == "service"


def test_a_sync_with_nothing_to_generate_raises_no_event(authed_api: APIClient, project: Project) -> None:
    endpoint(URL)
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    authed_api.post("/sync", {}, format="json")
    assert Delivery.objects.count() == 1


def test_a_dry_run_raises_no_event(authed_api: APIClient, project: Project) -> None:
    endpoint(URL)
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {"dry_run": True}, format="json")
    assert not Delivery.objects.exists()


def test_an_endpoint_gets_only_the_events_it_asked_for(authed_api: APIClient, project: Project) -> None:
    endpoint(URL, "rotation.completed")
    syncs = endpoint(URL, "sync.completed")
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    assert list(Delivery.objects.values_list("endpoint_id", flat=True)) == [syncs.pk]


def test_a_disabled_endpoint_gets_no_new_event(authed_api: APIClient, project: Project) -> None:
    hook = endpoint(URL)
    hook.enabled = False
    hook.save()
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    assert not Delivery.objects.exists()


def test_a_rotation_of_a_due_secret_raises_rotation_completed(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db"), monthly("fresh")))
    authed_api.post("/sync", {}, format="json")
    endpoint(URL)
    project.backdate("db", 45)
    assert authed_api.post("/rotation/execute", {}, format="json").status_code == 200
    delivery = Delivery.objects.get()
    assert delivery.event == "rotation.completed"
    assert delivery.payload["data"]["rotated"] == ["db"]
    assert delivery.payload["audit_id"] == AuditEntry.objects.get(action="execute_rotation").pk


def test_a_rotation_with_nothing_due_raises_no_event(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    endpoint(URL)
    authed_api.post("/rotation/execute", {}, format="json")
    assert not Delivery.objects.exists()


def test_a_rotation_that_fails_raises_rotation_failed_with_its_error_code(authed_api: APIClient,
                                                                          project: Project) -> None:
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    endpoint(URL)
    project.definition.write_text("secrets: [unclosed\n")
    authed_api.post("/rotation/execute", {}, format="json")
    delivery = Delivery.objects.get(event="rotation.failed")
    assert delivery.payload["data"]["error"] == "definition_invalid"
    # The rotation ran as a job, which failed too.
    assert Delivery.objects.get(event="job.failed").payload["data"]["operation"] == "execute_rotation"


def test_a_drift_check_that_finds_drift_raises_drift_detected(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    endpoint(URL)
    (project.root / "out/app.json").write_text('{"db": "edited-by-hand"}')
    authed_api.post("/drift/check", {}, format="json")
    delivery = Delivery.objects.get()
    assert delivery.event == "drift.detected"
    assert delivery.payload["data"]["secrets"] == ["db"]


def test_an_audit_row_that_cannot_be_written_leaves_no_event(authed_api: APIClient, project: Project,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from audit import listeners
    from secretsapi.actions import workspaces, writes

    endpoint(URL)
    project.write(definition(monthly("db")))

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the audit database refused the row")

    monkeypatch.setattr(listeners, "finish", refuse)
    with pytest.raises(RuntimeError):
        writes.sync(workspaces.workspace(), actor="t")
    assert not Delivery.objects.exists()


def test_an_event_that_cannot_be_written_leaves_the_outcome_unrecorded_too(
        authed_api: APIClient, project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from webhooks import outbox

    endpoint(URL)
    project.write(definition(monthly("db")))

    def refuse(*args: Any, **kwargs: Any) -> int:
        raise RuntimeError("the outbox refused the event")

    monkeypatch.setattr(outbox, "enqueue", refuse)
    from secretsapi.actions import workspaces, writes

    with pytest.raises(RuntimeError):
        writes.sync(workspaces.workspace(), actor="t")
    # The row the sync began still says "started": its completion rolled back with the event.
    assert AuditEntry.objects.get(action="sync").details["state"] == "started"
