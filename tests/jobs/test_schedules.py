"""Scheduled rotation and drift: the schedule rows follow the worker's settings, a due tick runs as
a job of `scheduler` (audited so), missed ticks run once, and `manage.py schedule` prints what the
workers run, whatever the caller's environment says."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from typing import Any

from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from audit.models import AuditEntry
from jobs import queue, schedules
from jobs.models import Schedule
from secretsapi import operations
from tests.factories import Project, definition, file_secret


def row(name: str) -> Schedule:
    return Schedule.objects.get(name=name)


def tick(now: Any = None) -> list[str]:
    return schedules.due(operations.enqueue, now)


def scheduled_jobs(operation: str) -> list[queue.JobRecord]:
    return [job for job in queue.page(owner=None, everyone=True, operations=[operation], limit=100, offset=0)
            if job.actor == "scheduler"]


def due_and_one_time(authed_api: APIClient, project: Project) -> None:
    """Three monthly secrets 40 days old: one due, one one-time, and one fresh."""
    project.write(definition(
        file_secret("due", rotation_period="30d"),
        file_secret("bootstrap", rotation_period="30d", one_time=True),
        file_secret("fresh", rotation_period="30d"),
    ))
    authed_api.post("/sync", {}, format="json")
    project.backdate("due", 40)
    project.backdate("bootstrap", 40)


def test_install_stores_each_schedule_with_its_latest_tick(db: None) -> None:
    schedules.install()
    now = timezone.now()
    rotation, drift = row("rotation"), row("drift")
    assert (rotation.cron, drift.cron) == ("0 * * * *", "0 0 * * *")
    assert now - timedelta(hours=1) < rotation.last_tick <= now and rotation.last_tick.minute == 0
    assert tick() == []  # nothing is due until the next tick


def test_a_schedule_set_off_is_removed(db: None, settings: Any) -> None:
    schedules.install()
    settings.SERVICE_DRIFT_SCHEDULE = None
    schedules.install()
    assert not Schedule.objects.filter(name="drift").exists()
    assert row("rotation").cron == "0 * * * *"


def test_an_unchanged_schedule_keeps_its_last_tick_and_a_changed_one_starts_afresh(db: None, settings: Any) -> None:
    schedules.install()
    missed = timezone.now() - timedelta(hours=3)
    Schedule.objects.update(last_tick=missed)
    settings.SERVICE_DRIFT_SCHEDULE = "30 2 * * *"
    schedules.install()
    assert row("rotation").last_tick == missed
    # A changed one first runs at its next tick: its latest one counts as run.
    assert row("drift").cron == "30 2 * * *"
    assert row("drift").last_tick == schedules.latest_tick("30 2 * * *", timezone.now())


def test_a_due_tick_rotates_only_due_secrets_never_one_time_ones_as_the_scheduler(
    authed_api: APIClient, project: Project
) -> None:
    due_and_one_time(authed_api, project)
    schedules.install()
    Schedule.objects.filter(name="rotation").update(last_tick=timezone.now() - timedelta(hours=2))
    before = project.lock()["secrets"]
    assert tick() == ["rotation"]
    after = project.lock()["secrets"]
    assert after["due"]["hash"] != before["due"]["hash"]
    assert after["bootstrap"]["hash"] == before["bootstrap"]["hash"]
    assert after["fresh"]["hash"] == before["fresh"]["hash"]
    [job] = scheduled_jobs("execute_rotation")
    assert job.state == "succeeded" and job.result["rotated"] == ["due"]
    entry = AuditEntry.objects.get(action="execute_rotation")
    assert (entry.user, entry.success, entry.details["force"]) == ("scheduler", True, False)


def test_ticks_missed_while_down_run_once_and_a_second_look_queues_nothing(
    authed_api: APIClient, project: Project
) -> None:
    project.write(definition(file_secret("a", rotation_period="30d")))
    authed_api.post("/sync", {}, format="json")
    schedules.install()
    Schedule.objects.filter(name="rotation").update(last_tick=timezone.now() - timedelta(hours=5))
    assert tick() == ["rotation"]
    assert tick() == []
    assert len(scheduled_jobs("execute_rotation")) == 1


def test_a_drift_tick_reports_what_changed(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("a")))
    authed_api.post("/sync", {}, format="json")
    (project.root / "out/app.env").write_text("a=changed\n")
    schedules.install()
    Schedule.objects.filter(name="drift").update(last_tick=timezone.now() - timedelta(days=2))
    tick()
    [job] = scheduled_jobs("check_drift")
    assert job.result["secrets_with_drift"] == ["a"]


def test_the_schedule_command_prints_what_the_workers_run_not_the_caller_s_settings(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    project.write(definition(file_secret("a")))
    settings.SERVICE_ROTATION_SCHEDULE = None
    settings.SERVICE_DRIFT_SCHEDULE = "15 3 * * *"
    schedules.install()  # what a worker with these settings stores
    Schedule.objects.filter(name="drift").update(last_tick=timezone.now() - timedelta(days=2))
    tick()
    settings.SERVICE_DRIFT_SCHEDULE = "0 0 * * *"  # the caller's environment says otherwise
    settings.SERVICE_ROTATION_SCHEDULE = "0 * * * *"
    out = StringIO()
    call_command("schedule", "--json", stdout=out)
    listed = {item["name"]: item for item in json.loads(out.getvalue())}
    assert (listed["rotation"]["cron"], listed["rotation"]["next_run"], listed["rotation"]["last_run"]) == (
        "off", None, None)
    assert listed["drift"]["cron"] == "15 3 * * *"
    assert listed["drift"]["last_state"] == "succeeded" and listed["drift"]["last_run"]
    assert listed["drift"]["next_run"] > listed["drift"]["last_run"]
    text = StringIO()
    call_command("schedule", stdout=text)
    assert "15 3 * * *" in text.getvalue() and "0 0 * * *" not in text.getvalue()
