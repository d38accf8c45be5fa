"""Scheduled rotation and drift: the schedule rows follow the settings, a due tick runs as a job
of `scheduler` (audited so), a missed tick runs once, and `manage.py schedule` lists them."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from typing import Any

from django.core.management import call_command
from django.utils import timezone
from django_q.models import Schedule
from django_q.scheduler import scheduler
from rest_framework.test import APIClient

from audit.models import AuditEntry
from jobs import schedules
from jobs.models import Job
from tests.factories import Project, definition, file_secret


def row(name: str) -> Schedule:
    return Schedule.objects.get(name=schedules.PREFIX + name)


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


def test_install_makes_one_row_per_schedule_at_its_next_tick(db: None) -> None:
    schedules.install()
    now = timezone.now()
    rotation, drift = row("rotation"), row("drift")
    assert (rotation.cron, drift.cron) == ("0 * * * *", "0 0 * * *")
    assert now < rotation.next_run <= now + timedelta(hours=1)
    assert rotation.next_run.minute == 0
    assert now < drift.next_run <= now + timedelta(days=1)


def test_a_schedule_set_off_is_removed(db: None, settings: Any) -> None:
    schedules.install()
    settings.SERVICE_DRIFT_SCHEDULE = None
    schedules.install()
    assert not Schedule.objects.filter(name=schedules.PREFIX + "drift").exists()
    assert row("rotation").cron == "0 * * * *"


def test_an_unchanged_schedule_keeps_its_next_run_and_a_changed_one_moves(db: None, settings: Any) -> None:
    schedules.install()
    missed = timezone.now() - timedelta(hours=3)
    Schedule.objects.filter(name__startswith=schedules.PREFIX).update(next_run=missed)
    settings.SERVICE_DRIFT_SCHEDULE = "30 2 * * *"
    schedules.install()
    assert row("rotation").next_run == missed
    assert row("drift").next_run > timezone.now()
    assert (row("drift").next_run.hour, row("drift").next_run.minute) == (2, 30)


def test_a_due_tick_rotates_only_due_secrets_never_one_time_ones_as_the_scheduler(
    authed_api: APIClient, project: Project
) -> None:
    due_and_one_time(authed_api, project)
    schedules.install()
    Schedule.objects.filter(name=schedules.PREFIX + "rotation").update(next_run=timezone.now() - timedelta(minutes=1))
    before = project.lock()["secrets"]
    scheduler()
    after = project.lock()["secrets"]
    assert after["due"]["hash"] != before["due"]["hash"]
    assert after["bootstrap"]["hash"] == before["bootstrap"]["hash"]
    assert after["fresh"]["hash"] == before["fresh"]["hash"]
    job = Job.objects.get(actor="scheduler")
    assert (job.operation, job.state) == ("execute_rotation", "succeeded")
    assert job.result is not None and job.result["rotated"] == ["due"]
    entry = AuditEntry.objects.get(action="execute_rotation")
    assert (entry.user, entry.success, entry.details["force"]) == ("scheduler", True, False)


def test_ticks_missed_while_down_run_once_then_the_next_tick_is_in_the_future(
    authed_api: APIClient, project: Project
) -> None:
    project.write(definition(file_secret("a", rotation_period="30d")))
    authed_api.post("/sync", {}, format="json")
    schedules.install()
    Schedule.objects.filter(name=schedules.PREFIX + "rotation").update(next_run=timezone.now() - timedelta(hours=5))
    scheduler()
    scheduler()
    assert Job.objects.filter(actor="scheduler", operation="execute_rotation").count() == 1
    assert row("rotation").next_run > timezone.now()


def test_a_drift_tick_reports_what_changed(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("a")))
    authed_api.post("/sync", {}, format="json")
    (project.root / "out/app.env").write_text("a=changed\n")
    schedules.install()
    Schedule.objects.filter(name=schedules.PREFIX + "drift").update(next_run=timezone.now() - timedelta(minutes=1))
    scheduler()
    job = Job.objects.get(actor="scheduler")
    assert job.operation == "check_drift"
    assert job.result is not None and job.result["secrets_with_drift"] == ["a"]


def test_the_schedule_command_lists_each_schedule_with_its_last_and_next_run(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    project.write(definition(file_secret("a")))
    settings.SERVICE_ROTATION_SCHEDULE = None
    schedules.install()
    Schedule.objects.filter(name=schedules.PREFIX + "drift").update(next_run=timezone.now() - timedelta(minutes=1))
    scheduler()
    out = StringIO()
    call_command("schedule", "--json", stdout=out)
    listed = {item["name"]: item for item in json.loads(out.getvalue())}
    assert (listed["rotation"]["cron"], listed["rotation"]["next_run"], listed["rotation"]["last_run"]) == (
        "off", None, None)
    assert listed["drift"]["cron"] == "0 0 * * *"
    assert listed["drift"]["last_state"] == "succeeded" and listed["drift"]["last_run"]
    assert listed["drift"]["next_run"] > listed["drift"]["last_run"]
