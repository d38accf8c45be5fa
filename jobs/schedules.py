"""Scheduled rotation and drift check: django-q2 schedules kept in line with the settings.

django-q2's scheduler (in every worker) takes due schedules with ``SELECT ... FOR UPDATE`` in
one transaction and moves their next run before committing, so with several instances on
PostgreSQL each tick is queued once. With ``catch_up`` off, a tick missed while every worker
was down is run once at start, then the next run is the next tick after now.

A scheduled run is a job like a requested one (``GET /jobs`` lists it), asked for by
``scheduler``: its audit row names that user. The rotation is ``POST /rotation/execute``
without ``force``: only due secrets, never one-time ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from croniter import croniter
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_q.models import Schedule

from jobs.models import Job
from jobs.operations import OPERATIONS
from jobs.runner import run_claimed, worker_name
from secretsapi import database_locks

ACTOR = "scheduler"
PREFIX = "secretsapi:"


@dataclass(frozen=True)
class Scheduled:
    name: str
    setting: str
    operation: str
    payload: dict[str, Any]

    @property
    def cron(self) -> str | None:
        value: str | None = getattr(settings, self.setting)
        return value


SCHEDULES: dict[str, Scheduled] = {s.name: s for s in (
    Scheduled("rotation", "SERVICE_ROTATION_SCHEDULE", "execute_rotation",
              {"secret_name": None, "force": False, "var_files": []}),
    Scheduled("drift", "SERVICE_DRIFT_SCHEDULE", "check_drift", {"secret_name": None, "var_files": []}),
)}
# Every minute each cluster ends the jobs of workers that died (jobs.runner.recover).
RECOVER = PREFIX + "recover"


def install() -> None:
    """Make the schedule rows say what the settings say; a schedule set ``off`` is removed.

    An unchanged expression keeps its next run (a tick missed while down stays due and runs
    once); a new or changed one runs first at its next tick from now. Instances starting
    together take turns (the lock they migrate under).
    """
    now = timezone.now()
    with database_locks.migration_lock(), transaction.atomic():
        for scheduled in SCHEDULES.values():
            rows = Schedule.objects.select_for_update().filter(name=PREFIX + scheduled.name)
            cron = scheduled.cron
            if cron is None:
                rows.delete()
                continue
            row = rows.first()
            if row is not None and row.cron == cron and row.schedule_type == Schedule.CRON:
                continue
            next_run = croniter(cron, now).get_next(datetime)
            rows.delete()
            Schedule.objects.create(name=PREFIX + scheduled.name, func="jobs.schedules.run_scheduled",
                                    args=repr(scheduled.name), schedule_type=Schedule.CRON, cron=cron,
                                    next_run=next_run, repeats=-1)
        if not Schedule.objects.filter(name=RECOVER).exists():
            Schedule.objects.create(name=RECOVER, func="jobs.schedules.recover_jobs", schedule_type=Schedule.MINUTES,
                                    minutes=1, next_run=now, repeats=-1)


def run_scheduled(name: str) -> None:
    """The task a schedule queues: its operation as a job of ``scheduler``, run here."""
    scheduled = SCHEDULES[name]
    payload = dict(scheduled.payload)
    job = Job.objects.create(operation=scheduled.operation, actor=ACTOR,
                             params=OPERATIONS[scheduled.operation].params(payload), payload=payload,
                             state=Job.RUNNING, started_at=timezone.now(), worker=worker_name(), attempts=1)
    run_claimed(job)


def recover_jobs() -> int:
    """The recovery schedule's task: how many jobs it ended (django-q2 keeps no result)."""
    from jobs.runner import recover

    return len(recover())


@dataclass(frozen=True)
class ScheduleState:
    name: str
    setting: str
    cron: str | None  # None: off
    next_run: datetime | None
    last_run: datetime | None
    last_state: str | None


def states() -> list[ScheduleState]:
    """Each schedule with its next run and its last run's start and outcome."""
    found = []
    for scheduled in SCHEDULES.values():
        row = Schedule.objects.filter(name=PREFIX + scheduled.name).first()
        last = (Job.objects.filter(actor=ACTOR, operation=scheduled.operation)
                .order_by("-created_at").values_list("started_at", "state").first())
        found.append(ScheduleState(
            scheduled.name, scheduled.setting, scheduled.cron,
            row.next_run if row is not None and scheduled.cron is not None else None,
            last[0] if last else None, last[1] if last else None,
        ))
    return found
