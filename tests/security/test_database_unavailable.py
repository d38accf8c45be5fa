"""The database stopping under a running server (issue 25, point 7): ``/health`` said healthy,
other calls were 500, and a sync's audit row stayed ``state: started``. Now ``/health`` is 503
``unhealthy`` with the reason, other calls 503 ``database_unavailable``, and the sync's outcome
is written once the database answers again.

The database is stopped in-process: every new cursor raises the driver's OperationalError, as
Django raises it for a server that refuses connections.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import DEFAULT_DB_ALIAS, OperationalError, connections
from rest_framework.test import APIClient

from audit.models import AuditEntry
from audit.recorder import COMPLETED_LATE, STARTED
from secretsapi import service
from secretsapi.actions import workspaces, writes
from tests.factories import Project, definition, file_secret


class Database:
    @staticmethod
    def stop() -> None:
        def refuse() -> None:
            raise OperationalError("connection refused")
        connections[DEFAULT_DB_ALIAS].ensure_connection = refuse  # type: ignore[method-assign]

    @staticmethod
    def start() -> None:
        vars(connections[DEFAULT_DB_ALIAS]).pop("ensure_connection", None)


@pytest.fixture
def database() -> Iterator[Database]:
    db = Database()
    yield db
    db.start()


@pytest.fixture
def client(authed_api: APIClient, project: Project) -> APIClient:
    project.write(definition(file_secret("db", "out/app.env")))
    authed_api.raise_request_exception = False  # what a real client sees
    return authed_api


def test_health_is_503_unhealthy_with_the_reason_when_the_database_is_down(
    client: APIClient, database: Database
) -> None:
    database.stop()
    response = client.get("/health")
    assert response.status_code == 503
    assert response.json()["status"] == "unhealthy"
    assert response.json()["reason"] == "database unreachable"


def test_health_is_healthy_again_once_the_database_is_back(client: APIClient, database: Database) -> None:
    database.stop()
    client.get("/health")
    database.start()
    response = client.get("/health")
    assert (response.status_code, response.json()["status"]) == (200, "healthy")


@pytest.mark.parametrize(("method", "path"), [("get", "/secrets"), ("get", "/secrets/db/status"),
                                              ("post", "/sync"), ("get", "/audit/logs")])
def test_other_calls_are_503_database_unavailable(
    client: APIClient, database: Database, method: str, path: str
) -> None:
    database.stop()
    response = getattr(client, method)(path, format="json")
    assert response.status_code == 503, response.content
    body = response.json()
    assert set(body) == {"error", "detail", "timestamp"}
    assert body["error"] == "Database unavailable"
    assert "database_unavailable" in body["detail"]


def stopping_after_the_engine(database: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """The database stops while the sync runs: after its row was begun, before it is finished.

    The sync is run as a job worker runs it (``writes.sync`` in that process): the request that
    queued it only waits for the job, and the outcome to write late is the worker's."""
    real_sync: Callable[..., Any] = service.sync

    def sync(*args: Any, **kwargs: Any) -> Any:
        result = real_sync(*args, **kwargs)
        database.stop()
        return result

    monkeypatch.setattr(service, "sync", sync)


def interrupted_sync() -> None:
    with pytest.raises(OperationalError):
        writes.sync(workspaces.workspace(), actor="cli:test")


def test_a_sync_whose_database_stops_midway_is_completed_when_it_is_back(
    client: APIClient, project: Project, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopping_after_the_engine(database, monkeypatch)
    interrupted_sync()
    database.start()
    (row,) = AuditEntry.objects.filter(action="sync")
    assert row.details["state"] == STARTED  # nothing could be written while it was down
    assert client.get("/health").status_code == 200
    row.refresh_from_db()
    assert "state" not in row.details
    assert row.details["generated"] == ["db"]
    assert row.details["completed_late"] == COMPLETED_LATE
    assert row.success is True
    assert project.lock()["secrets"]["db"]


def test_the_next_audit_write_completes_it_too(
    client: APIClient, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopping_after_the_engine(database, monkeypatch)
    interrupted_sync()
    database.start()
    assert client.get("/secrets").status_code == 200
    row = AuditEntry.objects.get(action="sync")
    assert row.details["completed_late"] == COMPLETED_LATE


def test_a_request_refused_before_any_view_is_503_too(
    client: APIClient, database: Database, settings: Any
) -> None:
    # No SERVICE_API_KEY and a foreign Host: whether the server is in insecure mode (no key rows)
    # is asked of the database by a middleware, before any view runs.
    settings.SERVICE_API_KEY = None
    database.stop()
    response = client.get("/secrets", HTTP_HOST="service.example")
    assert response.status_code == 503, response.content
    assert response.json()["error"] == "Database unavailable"


def test_an_outcome_whose_row_vanished_meanwhile_does_not_break_health(
    client: APIClient, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopping_after_the_engine(database, monkeypatch)
    interrupted_sync()
    database.start()
    AuditEntry.objects.filter(action="sync").delete()  # the database came back from an older backup
    assert client.get("/health").status_code == 200
    assert client.get("/secrets").status_code == 200
