"""Lockfile timestamps that no arithmetic can carry (issue 25, point 7): a time that overflows
when moved to UTC, or whose due time lies past the year 9999, is a corrupted entry of that one
secret. Drift reports it, status and rotation answer, a forced sync rewrites it; the other
secrets are unaffected."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Project, definition, file_secret

# The attacker's two entries: one that cannot be moved to UTC, one whose due time overflows.
EARLY = {"created_at": "0001-01-01T00:00:00+14:00", "updated_at": "0001-01-01T00:00:00+14:00"}
LATE = {"created_at": "9999-12-31T23:59:59+00:00", "updated_at": "9999-12-31T23:59:59+00:00"}
DAMAGE = {"early": EARLY, "late": LATE}


@pytest.fixture
def client(authed_api: APIClient) -> APIClient:
    authed_api.raise_request_exception = False  # what a real client sees
    return authed_api


@pytest.fixture(params=list(DAMAGE.values()), ids=list(DAMAGE.keys()))
def damaged(request: Any, client: APIClient, project: Project) -> Project:
    """Two synced secrets with a rotation period; ``bad``'s entry carries the attacker's times."""
    project.write(definition(file_secret("good", "out/good.env", rotation_period="30d"),
                             file_secret("bad", "out/bad.env", rotation_period="30d")))
    assert client.post("/sync", {}, format="json").status_code == 200
    data = project.lock()
    data["secrets"]["bad"].update(request.param)
    project.save_lock(data)
    return project


def test_the_status_of_another_secret_still_answers(client: APIClient, damaged: Project) -> None:
    response = client.get("/secrets/good/status")
    assert response.status_code == 200, response.content
    assert response.json()["exists"] is True


def test_the_status_of_the_damaged_secret_says_its_entry_is_corrupted(client: APIClient, damaged: Project) -> None:
    # Like any entry with wrong types: the status of that secret cannot be read (a 500 by the
    # lockfile's contract), with the error body naming the entry, not a traceback.
    response = client.get("/secrets/bad/status")
    assert response.status_code == 500
    body = response.json()
    assert set(body) == {"error", "detail", "timestamp"}
    assert "lockfile entry 'bad' is corrupted" in body["detail"]
    assert "Traceback" not in response.content.decode()


def test_drift_reports_the_damaged_entry_and_checks_the_other(client: APIClient, damaged: Project) -> None:
    response = client.post("/drift/check", {}, format="json")
    assert response.status_code == 200, response.content
    findings = [(d["secret"], d["details"]["reason"]) for d in response.json()["details"]]
    assert findings == [("bad", "corrupted_entry")]


def test_the_rotation_check_answers_for_every_secret(client: APIClient, damaged: Project) -> None:
    response = client.post("/rotation/check", {}, format="json")
    assert response.status_code == 200, response.content
    statuses = {s["name"]: s["status"] for s in response.json()["results"]}
    assert statuses == {"good": "up to date", "bad": "lockfile entry is corrupted; cannot tell"}


def test_a_rotation_skips_the_damaged_secret_and_rotates_the_other(client: APIClient, damaged: Project) -> None:
    response = client.post("/rotation/execute", {"force": True}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["rotated"] == ["good"]


def test_a_forced_sync_rewrites_the_damaged_entry(client: APIClient, damaged: Project) -> None:
    response = client.post("/sync", {"force": True}, format="json")
    assert response.status_code == 200, response.content
    assert sorted(response.json()["secrets_generated"]) == ["bad", "good"]
    entry = damaged.lock()["secrets"]["bad"]
    assert not entry["created_at"].startswith(("0001", "9999"))
    assert client.get("/secrets/bad/status").status_code == 200


def test_a_policy_check_answers(client: APIClient, damaged: Project) -> None:
    response = client.post("/policy/check", {}, format="json")
    assert response.status_code == 200, response.content
