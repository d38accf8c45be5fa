"""Scheduled rotation and drift check: cron expressions the workers install and tick.

A worker installs its settings' expressions at start (``install``): an unchanged one keeps its
last tick, so a tick missed while every worker was down is run once, and a new or changed one
first runs at its next tick from now. Every worker looks for a due tick every beat (``due``): the
one whose conditional update moves the schedule's ``last_tick`` forward queues it, in the same
transaction, so on PostgreSQL with several instances each tick is queued exactly once, and with
several missed ticks only the newest is. What ``manage.py schedule`` prints is these rows: the
expressions the workers run, whatever the caller's environment says.

A scheduled run is a job like a requested one (``GET /jobs`` lists it to an admin key), asked for
by ``scheduler``: its audit row names that user. A tick queues one job per project (the default
one and every one ``manage.py project add`` added), each run in its own project: one project's
invalid definition fails its own job only. The rotation is ``POST /rotation/execute``
without ``force``: only due secrets, never one-time ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from croniter import croniter
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from jobs.models import Schedule
from projects.registry import project_names

ACTOR = "scheduler"


@dataclass(frozen=True)
class Scheduled:
    name: str
    setting: str
    operation: str
    payload: dict[str, Any]

    @property
    def configured(self) -> str | None:
        """This process's setting (None: off); the workers run what they stored (``Schedule``)."""
        value: str | None = getattr(settings, self.setting)
        return value


SCHEDULES: dict[str, Scheduled] = {s.name: s for s in (
    Scheduled("rotation", "SERVICE_ROTATION_SCHEDULE", "execute_rotation",
              {"secret_name": None, "force": False, "var_files": []}),
    Scheduled("drift", "SERVICE_DRIFT_SCHEDULE", "check_drift", {"secret_name": None, "var_files": []}),
)}


def latest_tick(cron: str, now: datetime) -> datetime:
    """The newest tick at or before ``now``."""
    found: datetime = croniter(cron, now.replace(microsecond=0) + timedelta(seconds=1)).get_prev(datetime)
    return found


def install(now: datetime | None = None) -> None:
    """Make the rows say what this worker's settings say; a schedule set ``off`` is removed."""
    now = now or timezone.now()
    with transaction.atomic():
        for scheduled in SCHEDULES.values():
            cron = scheduled.configured
            rows = Schedule.objects.select_for_update().filter(name=scheduled.name)
            if cron is None:
                rows.delete()
                continue
            row = rows.first()
            if row is not None and row.cron == cron:
                continue
            Schedule.objects.update_or_create(name=scheduled.name, defaults={
                "cron": cron, "setting": scheduled.setting, "last_tick": latest_tick(cron, now),
                "installed_at": now})


def due(enqueue: Any, now: datetime | None = None) -> list[str]:
    """Queue every schedule's due tick, once across every worker, as one job per project:
    ``enqueue(operation, payload, actor=..., project=...)`` runs in the transaction that claims
    the tick. The names queued."""
    now = now or timezone.now()
    queued = []
    for row in Schedule.objects.all():
        scheduled = SCHEDULES.get(row.name)
        if scheduled is None:
            continue
        tick = latest_tick(row.cron, now)
        if tick <= row.last_tick:
            continue
        with transaction.atomic():
            if Schedule.objects.filter(name=row.name, cron=row.cron, last_tick__lt=tick).update(last_tick=tick):
                for project in project_names():
                    enqueue(scheduled.operation, dict(scheduled.payload), actor=ACTOR, project=project)
                queued.append(row.name)
    return queued


@dataclass(frozen=True)
class ScheduleState:
    name: str
    setting: str
    cron: str | None  # None: off, or no worker has installed it
    installed: bool
    next_run: datetime | None
    last_run: datetime | None
    last_state: str | None


def states(now: datetime | None = None) -> list[ScheduleState]:
    """Each schedule as the workers run it, with its next run and its last run's start and outcome."""
    from jobs.queue import STATES

    now = now or timezone.now()
    stored = {row.name: row for row in Schedule.objects.all()}
    found = []
    for scheduled in SCHEDULES.values():
        row = stored.get(scheduled.name)
        last = (DBTaskResult.objects.filter(args_kwargs__kwargs__actor=ACTOR,
                                            args_kwargs__kwargs__operation=scheduled.operation)
                .order_by("-enqueued_at").values_list("started_at", "enqueued_at", "status").first())
        found.append(ScheduleState(
            scheduled.name, scheduled.setting, row.cron if row else None, row is not None,
            croniter(row.cron, now).get_next(datetime) if row else None,
            (last[0] or last[1]) if last else None, STATES.get(last[2]) if last else None,
        ))
    return found
