"""A job: one long operation asked for once, run by a worker, read at ``GET /jobs/{id}``."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.db import models
from django.utils import timezone


class JSONText(models.JSONField):
    """JSON kept as text: PostgreSQL's ``jsonb`` refuses the character U+0000, which a request
    may carry (a variable's name) and an answer may echo; JSON text escapes it. Never queried
    by its content."""

    def db_type(self, connection: Any) -> str:
        return "text"

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        return None if value is None else json.dumps(value)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return None if value is None else json.loads(value)


class Job(models.Model):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    STATES = ((QUEUED, QUEUED), (RUNNING, RUNNING), (SUCCEEDED, SUCCEEDED), (FAILED, FAILED),
              (CANCELLED, CANCELLED))
    FINISHED = frozenset({SUCCEEDED, FAILED, CANCELLED})

    # A random id: a job's address says nothing about how many others there are.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    operation = models.CharField(max_length=32)
    state = models.CharField(max_length=16, choices=STATES, default=QUEUED)
    # Who asked: the audit log's name for them (a key's name, cli:alice, scheduler).
    actor = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001 - None: insecure mode, as in the audit log
    # The request as the audit row shows it: names, flags, never values.
    params = JSONText(default=dict)
    # The request as the operation reads it (a definition to validate may hold values): only
    # until the job ends, then cleared.
    payload = JSONText(null=True, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    # When the job has ended: the status and body the synchronous call answers.
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    result = JSONText(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # host:pid of the process running it, so that a dead one's jobs can be ended.
    worker = models.CharField(max_length=255, blank=True, default="")
    # Runs started: a job whose worker died is run again at most once, and only if it wrote nothing.
    attempts = models.PositiveSmallIntegerField(default=0)
    # The operation's audit row once it began a write: a worker that dies leaves it to complete.
    audit_row = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = [  # noqa: RUF012 - Django's Meta
            models.Index(fields=["-created_at", "-id"], name="jobs_newest"),
            models.Index(fields=["state", "-created_at"], name="jobs_state_newest"),
            models.Index(fields=["operation", "-created_at"], name="jobs_operation_newest"),
        ]

    def __str__(self) -> str:
        return f"{self.operation} {self.id} ({self.state})"

    @property
    def finished(self) -> bool:
        return self.state in self.FINISHED
