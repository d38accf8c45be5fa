"""What the job workers say about themselves, and the schedules they run.

A job is a row of the task engine's one table (django-tasks' database backend,
``django_tasks_db.models.DBTaskResult``): its state, request, times and result. Beside it, each
worker's ``WorkerBeat`` is its heartbeat and what it is doing now (the job, its progress, the
audit row its write began), and each ``Schedule`` is a cron expression as the workers run it.
"""

from __future__ import annotations

from django.db import models


class WorkerBeat(models.Model):
    """One job runner (a thread of `manage.py worker` taking jobs of one queue), while it lives.

    Written every SERVICE_WORKER_HEARTBEAT_SECONDS; removed when the worker stops cleanly. A row
    whose ``seen_at`` is old belongs to a worker that died: its job is recovered (jobs.recovery).
    """

    # The task engine's worker id, recorded in each job it claims (``worker_ids``).
    id = models.CharField(primary_key=True, max_length=64)
    host = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    queue = models.CharField(max_length=32)
    started_at = models.DateTimeField()
    seen_at = models.DateTimeField(db_index=True)
    # The job it runs now, how far it got (in secrets) and the audit row its write began: the
    # row a recovery completes, never writing a second one.
    job = models.UUIDField(null=True, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    audit_row = models.BigIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.id} ({self.queue})"


class Schedule(models.Model):
    """A schedule as the workers run it: the cron expression a worker installed from its settings,
    and the last tick queued. A tick is queued by the one worker whose conditional update moves
    ``last_tick`` forward (jobs.schedules), so each runs once however many workers look."""

    name = models.CharField(primary_key=True, max_length=32)
    cron = models.CharField(max_length=255)
    setting = models.CharField(max_length=64)
    last_tick = models.DateTimeField()
    installed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} {self.cron}"
