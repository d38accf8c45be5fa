"""GET / and GET /health bodies; `manage.py health` for container health checks."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from jobs import workers
from jobs.models import WorkerBeat
from secretsapi import __version__
from tests import inline_jobs


def test_root_names_the_service_version_and_docs(api: APIClient) -> None:
    body = api.get("/").json()
    assert body == {"message": body["message"], "version": __version__, "docs": "/docs"}
    assert body["message"]


@pytest.fixture
def real_heartbeats() -> Iterator[None]:
    """Workers are alive only by their heartbeat rows (the test's process stands for none)."""
    with inline_jobs.no_worker():
        yield


def beat(seconds_ago: float) -> datetime:
    seen = timezone.now() - timedelta(seconds=seconds_ago)
    WorkerBeat.objects.create(id=f"h:1:w{seconds_ago}", host="h", pid=1, queue="q", started_at=seen, seen_at=seen)
    return seen


def test_health_is_healthy_with_version_current_time_and_its_parts_up(
    api: APIClient, real_heartbeats: None
) -> None:
    seen = beat(2)
    body = api.get("/health").json()
    assert (body["status"], body["database"], body["workers"]) == ("healthy", "up", "up")
    assert body["version"] == __version__
    assert datetime.fromisoformat(body["timestamp"]).tzinfo is not None
    assert datetime.fromisoformat(body["last_heartbeat"]) == seen
    assert set(body) == {"status", "version", "timestamp", "database", "workers", "last_heartbeat"}


def test_health_is_degraded_but_200_when_no_worker_beat_lately(
    api: APIClient, real_heartbeats: None, settings: Any
) -> None:
    settings.SERVICE_WORKER_HEARTBEAT_SECONDS = 10
    seen = beat(31)
    response = api.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["database"], body["workers"]) == ("degraded", "up", "down")
    assert datetime.fromisoformat(body["last_heartbeat"]) == seen


def test_health_names_no_heartbeat_when_no_worker_ever_ran(api: APIClient, real_heartbeats: None) -> None:
    body = api.get("/health").json()
    assert (body["status"], body["workers"], body["last_heartbeat"]) == ("degraded", "down", None)


def test_the_health_command_exits_0_when_the_database_answers(db: None, capsys: Any) -> None:
    call_command("health")
    assert capsys.readouterr().out.strip() == "database: up"


def test_the_health_command_with_worker_needs_a_fresh_heartbeat(db: None, real_heartbeats: None) -> None:
    beat(workers.interval() * 3 + 1)
    with pytest.raises(CommandError) as refused:
        call_command("health", "--worker")
    assert refused.value.returncode == 1
    assert "workers: down" in str(refused.value)
    beat(1)
    call_command("health", "--worker")


def test_the_health_command_with_worker_on_this_host_ignores_other_hosts(db: None, real_heartbeats: None) -> None:
    beat(1)  # host "h"
    call_command("health", "--worker")
    with pytest.raises(CommandError):
        call_command("health", "--worker", "--this-host")


def test_version_is_semantic() -> None:
    major, minor, patch = __version__.split(".")
    assert all(part.isdigit() for part in (major, minor, patch))
