"""Payloads say what was written, why something failed and where it ran; ``drift.detected`` is
sent once per new drift: not again for the same drift, again when it changes or comes back."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, definition, file_secret
from tests.webhooks.support import endpoint
from webhooks.models import Delivery

URL = "http://127.0.0.1:9/hook"


@pytest.fixture(autouse=True)
def _private_allowed(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True


def monthly(name: str, path: str = "out/app.json") -> dict[str, Any]:
    return file_secret(name, path, kind="random_hex", rotation_period="30d")


def _payloads(event: str) -> list[dict[str, Any]]:
    return [d.payload for d in Delivery.objects.filter(event=event).order_by("id")]


def test_rotation_completed_names_every_target_it_wrote(authed_api: APIClient, project: Project) -> None:
    project.write(definition({**monthly("db"), "targets": [
        {"provider": "local", "kind": "file", "config": {"path": "out/app.json"}},
        {"provider": "local", "kind": "file", "config": {"path": "out/db.env"}}]}, monthly("fresh", "out/f.json")))
    authed_api.post("/sync", {}, format="json")
    endpoint(URL)
    project.backdate("db", 45)
    assert authed_api.post("/rotation/execute", {}, format="json").status_code == 200
    (payload,) = _payloads("rotation.completed")
    recorded = list(project.lock()["secrets"]["db"]["targets"])
    assert len(recorded) == 2
    assert payload["data"]["written_targets"] == {"db": recorded}


def test_sync_completed_names_every_target_it_wrote(authed_api: APIClient, project: Project) -> None:
    endpoint(URL)
    project.write(definition(monthly("db"), monthly("api", "out/api.env")))
    authed_api.post("/sync", {}, format="json")
    (payload,) = _payloads("sync.completed")
    lock = project.lock()["secrets"]
    assert payload["data"]["written_targets"] == {name: list(lock[name]["targets"]) for name in ("db", "api")}


def test_rotation_failed_carries_the_error_message(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    endpoint(URL)
    authed_api.post("/rotation/execute", {"secret_name": "no_such_secret", "force": True}, format="json")
    (payload,) = _payloads("rotation.failed")
    assert payload["data"]["error"] == "secret_not_defined"
    assert payload["data"]["message"] == "secret 'no_such_secret' is not defined in the definition file"


def test_a_secret_that_fails_to_rotate_names_its_target_and_message_never_a_value(
    authed_api: APIClient, project: Project
) -> None:
    project.write(definition(monthly("db", "out/db.json"), monthly("api", "out/api.json")))
    authed_api.post("/sync", {}, format="json")
    endpoint(URL)
    values = [*json.loads((project.root / "out/db.json").read_text()).values()]
    (project.root / "out/api.json").unlink()
    (project.root / "out/api.json").mkdir()  # a folder where the file was: that write fails
    authed_api.post("/rotation/execute", {"force": True}, format="json")
    (failed,) = _payloads("rotation.failed")
    (error,) = failed["data"]["errors"]
    assert error["secret"] == "api" and error["target"] and error["message"]
    assert failed["data"]["message"] == error["message"]
    assert failed["data"]["failed"] == ["api"]
    (completed,) = _payloads("rotation.completed")
    assert list(completed["data"]["written_targets"]) == ["db"]
    new_values = [*json.loads((project.root / "out/db.json").read_text()).values()]
    text = json.dumps([failed, completed])
    for value in values + new_values:
        assert value not in text


def test_an_unchanged_drift_is_sent_once(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db"), monthly("api", "out/api.json")))
    authed_api.post("/sync", {}, format="json")
    endpoint(URL)
    (project.root / "out/app.json").write_text('{"db": "edited-by-hand"}')
    for _ in range(3):
        assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is True
    (payload,) = _payloads("drift.detected")
    assert payload["data"]["secrets"] == ["db"]
    # Every check still reports it: only the event is not repeated.
    assert [r.outcome for r in AuditEntry.objects.filter(action="check_drift")] == ["drift"] * 3


def test_a_drift_that_changes_is_sent_again_naming_only_what_is_new(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db"), monthly("api", "out/api.json")))
    authed_api.post("/sync", {}, format="json")
    endpoint(URL)
    (project.root / "out/app.json").write_text('{"db": "edited-by-hand"}')
    authed_api.post("/drift/check", {}, format="json")
    (project.root / "out/api.json").write_text('{"api": "also-edited"}')
    authed_api.post("/drift/check", {}, format="json")
    authed_api.post("/drift/check", {}, format="json")
    first, second = _payloads("drift.detected")
    assert first["data"]["secrets"] == ["db"]
    assert second["data"]["secrets"] == ["api"] and sorted(second["data"]["drifting"]) == ["api", "db"]


def test_a_drift_resolved_then_back_is_sent_again(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    endpoint(URL, "drift.detected")
    target = project.root / "out/app.json"
    synced = target.read_text()
    target.write_text('{"db": "edited-by-hand"}')
    authed_api.post("/drift/check", {}, format="json")
    target.write_text(synced)  # put right
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False
    target.write_text('{"db": "edited-by-hand"}')
    authed_api.post("/drift/check", {}, format="json")
    assert len(_payloads("drift.detected")) == 2


def test_a_check_of_one_secret_leaves_the_others_drift_known(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db"), monthly("api", "out/api.json")))
    authed_api.post("/sync", {}, format="json")
    endpoint(URL, "drift.detected")
    (project.root / "out/app.json").write_text('{"db": "edited-by-hand"}')
    authed_api.post("/drift/check", {}, format="json")
    authed_api.post("/drift/check", {"secret_name": "api"}, format="json")  # api is fine: db stays known
    authed_api.post("/drift/check", {}, format="json")
    assert len(_payloads("drift.detected")) == 1


def test_a_payload_names_the_project_environment_and_origin(authed_api: APIClient, project: Project) -> None:
    endpoint(URL)
    project.write(definition(monthly("db"), metadata={"project": "payments"},
                             environments={"default": "staging", "profiles": {"staging": {}}}))
    authed_api.post("/sync", {}, format="json", REMOTE_ADDR="198.51.100.7")
    (payload,) = _payloads("sync.completed")
    assert (payload["definition_project"], payload["environment"]) == ("payments", "staging")
    assert payload["project"] == "default"
    assert payload["definition"] == str(project.definition)
    assert payload["origin"] == "client:198.51.100.7"


def test_a_command_lines_payload_names_its_host(db: None, project: Project) -> None:
    from audit import origin

    endpoint(URL)
    project.write(definition(monthly("db")))
    call_command("sync", stdout=StringIO())
    (payload,) = _payloads("sync.completed")
    assert payload["origin"] == origin.process_origin() and payload["definition_project"] is None
