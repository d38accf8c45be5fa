"""How a job ends: its failure stored as data, its request forgotten, its worker's row freed.

The task engine ends a job itself (``SUCCESSFUL`` with the task's return value, or ``FAILED``
with the exception's class and traceback) and then sends ``task_finished``. The operation's
failure, as data (``{"code", "message"}``: what the API answers, never a value), is kept here
by the running task just before it raises, and written by ``finished`` with the job's end, in
the process and thread that ran it.
"""

from __future__ import annotations

import threading
from typing import Any

from django.db import transaction
from django_tasks_db.models import DBTaskResult

from jobs import queue
from jobs.models import WorkerBeat
from webhooks import events, outbox

_failing: dict[str, dict[str, Any]] = {}
_failing_lock = threading.Lock()


class JobFailed(Exception):
    """Raised by a job's task when its operation failed: the job ends ``failed`` with the failure
    kept by ``failing`` (the exception itself says only its code)."""


def failing(job_id: str, outcome: dict[str, Any]) -> JobFailed:
    """Keep a failing job's outcome (``failure``, ``done``, ``total``) for ``finished``."""
    with _failing_lock:
        _failing[str(job_id)] = outcome
    return JobFailed(queue.data(outcome["failure"])["code"])


def take_failing(job_id: Any) -> dict[str, Any] | None:
    """The outcome ``failing`` kept for a job whose end the engine could not write (the database
    gone as it ended), if this process kept one; it is no longer kept."""
    with _failing_lock:
        return _failing.pop(str(job_id), None)


def kept(job_id: Any) -> dict[str, Any] | None:
    """The outcome ``failing`` kept for the job, if any (left for ``finished``)."""
    with _failing_lock:
        return _failing.get(str(job_id))


def finished(job_id: str, *, status: str, worker: str | None) -> None:
    """After the engine ended the job: its failure written (and ``job.failed`` raised), its request
    cleared, its worker's row no longer naming it. One transaction."""
    with _failing_lock:
        outcome = _failing.pop(str(job_id), None)
    with transaction.atomic():
        if status == "FAILED":
            fail(job_id, outcome or {"failure": queue.text({"code": "internal_error", "message": None})})
        queue.forget_request(job_id)
        if worker:
            WorkerBeat.objects.filter(id=worker, job=job_id).update(job=None, audit_row=None)


def fail(job_id: Any, outcome: dict[str, Any], *, audit_row: int | None = None) -> None:
    """Store a failed job's outcome and raise ``job.failed`` (webhooks), in the caller's transaction."""
    DBTaskResult.objects.filter(pk=job_id).update(return_value=outcome)
    row = DBTaskResult.objects.filter(pk=job_id).first()
    if row is None:
        return
    record = queue.record_of(row)
    failure = queue.data(outcome["failure"])
    outbox.enqueue([events.job_failed(record.id, record.operation, record.actor, failure["code"],
                                      failure.get("message"))], actor=record.actor, audit_row=audit_row,
                   context={"project": record.project})
