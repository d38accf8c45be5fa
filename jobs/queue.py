"""The job table: a job is a row of django-tasks' database backend (``DBTaskResult``).

A job's request is the task's keyword arguments (``operation``, ``actor``, ``params``: what the
job shows, as its audit row does, and ``payload``: what the operation reads, cleared when the
job ends). Its ``return_value`` is the job's outcome as data: ``{"result": ...}`` (the
operation's result, the engine's dataclass as JSON) or ``{"failure": {"code", "message"}}``,
with ``done``/``total``, its progress in secrets. The API renders either as the body its
endpoint answers. Nothing here knows HTTP.

``params``, ``payload``, ``result`` and ``failure`` are kept as JSON *text* inside the engine's
JSON columns: PostgreSQL's ``jsonb`` refuses the character U+0000, which a definition sent for
validation or a variable's name may carry and a result may echo; JSON text escapes it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from jobs.models import WorkerBeat
from projects.current import DEFAULT as DEFAULT_PROJECT
from secretsapi.pages import Page

Rows = QuerySet[DBTaskResult[..., Any]]

# The task engine's states, as a job shows them.
STATES: dict[str, str] = {"READY": "queued", "RUNNING": "running", "SUCCESSFUL": "succeeded", "FAILED": "failed"}
ENGINE_STATE: dict[str, str] = {shown: engine for engine, shown in STATES.items()}
JOB_STATES = tuple(STATES.values())
ACTIVE = ("READY", "RUNNING")
FINISHED = ("SUCCESSFUL", "FAILED")


@dataclass(frozen=True)
class JobRecord:
    """One job as a reader sees it: never its payload."""

    id: str
    operation: str
    state: str
    done: int
    total: int | None
    actor: str | None
    params: dict[str, Any]
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    # Once ended: the operation's result (data), or its failure ({"code", "message"}).
    result: Any = None
    failure: dict[str, Any] | None = None
    # A job an earlier version ran keeps the answer it stored then: {"status", "body"}.
    legacy: dict[str, Any] | None = None
    # The project it runs in (a job queued before projects: the default one).
    project: str = DEFAULT_PROJECT

    @property
    def finished(self) -> bool:
        return self.state in ("succeeded", "failed")


def _kwargs(row: DBTaskResult[..., Any]) -> dict[str, Any]:
    args_kwargs = row.args_kwargs if isinstance(row.args_kwargs, dict) else {}
    kwargs = args_kwargs.get("kwargs")
    return kwargs if isinstance(kwargs, dict) else {}


def text(value: Any) -> str:
    """``value`` as JSON text, for the engine's JSON columns (see the module docstring)."""
    return json.dumps(value)


def data(value: Any) -> Any:
    """What ``text`` kept (a value stored otherwise is returned as it is)."""
    return json.loads(value) if isinstance(value, str) else value


# How long after the engine ended a job its operation's failure may still be on its way (written
# by the runner right after, in its own transaction); past this it never will be.
FAILURE_PENDING = timedelta(seconds=10)
_JOB_FAILED = "jobs.outcomes.JobFailed"


def _failure_pending(row: DBTaskResult[..., Any]) -> bool:
    return (row.exception_class_path == _JOB_FAILED and row.finished_at is not None
            and row.finished_at > timezone.now() - FAILURE_PENDING)


def record_of(row: DBTaskResult[..., Any], beat: WorkerBeat | None = None) -> JobRecord:
    kwargs = _kwargs(row)
    outcome = row.return_value if isinstance(row.return_value, dict) else {}
    done, total = outcome.get("done", 0), outcome.get("total")
    if beat is not None and beat.job is not None and str(beat.job) == str(row.id):
        done, total = beat.done, beat.total
    failure = data(outcome.get("failure"))
    state = STATES.get(row.status, row.status.lower())
    finished_at = row.finished_at
    if row.status == "FAILED" and not failure and "legacy" not in outcome:
        if _failure_pending(row):
            # The engine ended the job (clearing its result) and its runner is about to store the
            # operation's failure (jobs.outcomes.finished): still running, not an internal error.
            state, finished_at = "running", None
        else:
            # Failed without saying why (the engine's own failure, e.g. a result it could not store).
            failure = {"code": "internal_error", "message": None}
    return JobRecord(
        id=str(row.id), operation=str(kwargs.get("operation", "")), state=state,
        done=int(done or 0), total=total, actor=kwargs.get("actor"), params=data(kwargs.get("params")) or {},
        created_at=row.enqueued_at, started_at=row.started_at, finished_at=finished_at,
        result=data(outcome.get("result")), failure=failure, legacy=data(outcome.get("legacy")),
        project=str(kwargs.get("project") or DEFAULT_PROJECT),
    )


def find(job_id: str) -> JobRecord | None:
    """The job, or None when there is none (or the id is not one a job could have)."""
    try:
        key = uuid.UUID(job_id)
    except ValueError:
        return None
    row = DBTaskResult.objects.filter(pk=key).first()
    if row is None:
        return None
    beat = WorkerBeat.objects.filter(job=key).first() if row.status == "RUNNING" else None
    return record_of(row, beat)


def visible(queryset: Rows, *, owner: str | None, everyone: bool) -> Rows:
    """The jobs a reader may see: its own (those it asked for), or every job for ``everyone``."""
    return queryset if everyone else queryset.filter(args_kwargs__kwargs__actor=owner)


def in_project(queryset: Rows, project: str) -> Rows:
    """The jobs of ``project`` (the default one's include those queued before projects existed)."""
    named = Q(args_kwargs__kwargs__project=project)
    if project == DEFAULT_PROJECT:
        named |= ~Q(args_kwargs__kwargs__has_key="project")
    return queryset.filter(named)


def page(
    *, owner: str | None, everyone: bool, operations: Collection[str], limit: int, offset: int,
    state: str | None = None, operation: str | None = None, since: datetime | None = None,
    project: str | None = None,
) -> Page[JobRecord]:
    """A newest-first page of the jobs a reader may see, of ``operations`` only (of ``project``'s,
    when named)."""
    wanted = [operation] if operation else list(operations)
    if operation and operation not in operations:
        wanted = []
    rows = visible(DBTaskResult.objects.all(), owner=owner, everyone=everyone).filter(
        args_kwargs__kwargs__operation__in=wanted)
    if project is not None:
        rows = in_project(rows, project)
    if state:
        rows = rows.filter(status=ENGINE_STATE[state])
    if since:
        rows = rows.filter(enqueued_at__gte=since)
    found = list(rows.order_by("-enqueued_at", "-id")[offset: offset + limit])
    running = [row.id for row in found if row.status == "RUNNING"]
    beats = {str(b.job): b for b in WorkerBeat.objects.filter(job__in=running)} if running else {}
    return Page((record_of(row, beats.get(str(row.id))) for row in found), rows.count())


def active(*, actor: str | None = None, project: str | None = None) -> int:
    """Jobs queued or running: all of them, or those ``actor`` asked for, or those of ``project``."""
    rows: Rows = DBTaskResult.objects.filter(status__in=ACTIVE)
    if actor is not None:
        rows = rows.filter(args_kwargs__kwargs__actor=actor)
    if project is not None:
        rows = in_project(rows, project)
    return rows.count()


def counts_by_state() -> dict[str, int]:
    """Jobs queued and running (GET /metrics)."""
    found = {"queued": 0, "running": 0}
    for status in DBTaskResult.objects.filter(status__in=ACTIVE).values_list("status", flat=True):
        found[STATES[status]] += 1
    return found


def forget_request(job_id: Any) -> None:
    """Clear what the operation read (a definition sent for validation may hold values): a job
    keeps only its ``params`` once it has ended."""
    row = DBTaskResult.objects.filter(pk=job_id).only("args_kwargs").first()
    if row is None:
        return
    kwargs = {k: v for k, v in _kwargs(row).items() if k != "payload"}
    DBTaskResult.objects.filter(pk=job_id).update(args_kwargs={"args": [], "kwargs": kwargs})


def prune(before: datetime) -> int:
    """Delete the jobs that ended before ``before``; how many."""
    deleted, _ = DBTaskResult.objects.filter(status__in=FINISHED).filter(
        Q(finished_at__lt=before) | Q(finished_at__isnull=True, enqueued_at__lt=before)).delete()
    return int(deleted)


def prune_ended() -> int:
    """Delete the jobs that ended more than SERVICE_JOB_RETENTION_DAYS ago (every worker, hourly)."""
    return prune(timezone.now() - timedelta(days=settings.SERVICE_JOB_RETENTION_DAYS))
