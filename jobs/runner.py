"""Submitting a job, waiting for it, running it in a worker, and ending the jobs of dead workers.

The task django-q2 queues is only ``run_job(job_id)``: the request waits in the job's row,
so django-q2's tables never hold a definition sent for validation. ``run_job`` claims the
job (queued -> running) with one conditional update, so a task delivered twice (a worker
presumed dead) runs once. Every outcome is written by ``_end``: the one place a job's end is
known (its state, status and body).
"""

from __future__ import annotations

import functools
import os
import socket
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections, transaction
from django.db.models import F
from django.utils import timezone
from django_q.tasks import async_task

from audit.models import AuditEntry
from audit.recorder import complete_unwritten, finish, has_unwritten
from audit.write_gate import audited_transaction
from jobs.models import Job
from jobs.operations import OPERATIONS
from secretsapi import actions
from secretsapi.api.errors import error_answer
from secretsapi.service.errors import WorkerDied
from webhooks import events, outbox

TASK = "jobs.runner.run_job"
# A job's progress is written at most this often (a sync reports every secret).
PROGRESS_INTERVAL = 0.5
# A request waiting for its job reads the job's row at most this often: a check that takes 50 ms
# in the worker is answered about 50 ms later, not 150 ms (one primary-key read per interval).
WAIT_POLL_MAX = 0.05
# A job whose worker died is run again this many times at most (when it wrote nothing).
MAX_ATTEMPTS = 2


def submit(operation: str, payload: dict[str, Any], *, actor: str | None) -> Job:
    """Queue ``operation`` with its validated request; the job and its task commit together."""
    params = OPERATIONS[operation].params(payload)
    with transaction.atomic():
        job = Job.objects.create(operation=operation, actor=actor, params=params, payload=payload)
        _enqueue(job)
    return job


def _enqueue(job: Job) -> None:
    async_task(TASK, str(job.pk), group=job.operation)


def wait(job: Job, seconds: float) -> Job:
    """The job once it has ended, or as it is after ``seconds``."""
    deadline = time.monotonic() + seconds
    delay = 0.01
    while not job.finished:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        time.sleep(min(delay, left))
        delay = min(delay * 2, WAIT_POLL_MAX)
        job.refresh_from_db()
    return job


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def run_job(job_id: str) -> None:
    """The task: run the job if it is still queued (a second delivery finds it taken)."""
    me = worker_name()
    claimed = Job.objects.filter(pk=job_id, state=Job.QUEUED).update(
        state=Job.RUNNING, started_at=timezone.now(), worker=me, attempts=F("attempts") + 1)
    if not claimed:
        return
    run_claimed(Job.objects.get(pk=job_id))




def run_claimed(job: Job) -> None:
    """Run a job this process has claimed; its outcome is the job's, never an exception."""
    operation = OPERATIONS[job.operation]
    token = actions.audit_row_started.set(functools.partial(_keep_audit_row, job.pk))
    try:
        body = operation.run(job.payload or {}, job.actor, _Reporter(job.pk))
        state, status = Job.SUCCEEDED, 200
    except Exception as exc:
        # As the API answers it: the operation's audit row already says it failed.
        status, body = error_answer(exc)
        state = Job.FAILED
    finally:
        actions.audit_row_started.reset(token)
    _when_the_database_answers(functools.partial(_end, job, state, status, body))


# A job that ended while the database was away waits for it this long (a second between tries) to
# write its audit row's outcome and its own end; a worker can run nothing without it anyway.
DATABASE_WAIT_SECONDS = 120


def _when_the_database_answers(end: Any) -> None:
    """Write the outcomes this process could not (``audit.recorder.keep_unwritten``), then ``end``."""
    deadline = time.monotonic() + DATABASE_WAIT_SECONDS
    while True:
        try:
            if has_unwritten():
                complete_unwritten()
            end()
            return
        except (OperationalError, InterfaceError):
            if time.monotonic() > deadline:
                raise  # the job stays running: recovery ends it once the database is back
            close_old_connections()
            time.sleep(1)


def _end(job: Job, state: str, status: int, body: dict[str, Any]) -> bool:
    """End a running job, unless another process ended it first; True when this one did.

    A job that ends failed raises ``job.failed`` (webhooks), committed with its end.
    """
    with transaction.atomic():
        ended = bool(Job.objects.filter(pk=job.pk, state=Job.RUNNING, worker=job.worker).update(
            state=state, status_code=status, result=body, finished_at=timezone.now(), payload=None))
        if ended and state == Job.FAILED:
            outbox.enqueue([events.job_failed(str(job.pk), job.operation, job.actor, status, str(body.get("error")))],
                           actor=job.actor, audit_row=job.audit_row)
    return ended


def _keep_audit_row(job_id: Any, row_id: int) -> None:
    Job.objects.filter(pk=job_id).update(audit_row=row_id)


class _Reporter:
    """The operation's ``progress``: written to the job's row, at most every PROGRESS_INTERVAL."""

    def __init__(self, job_id: Any) -> None:
        self.job_id = job_id
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.last < PROGRESS_INTERVAL:
            return
        self.last = now
        Job.objects.filter(pk=self.job_id).update(done=done, total=total)


def recover() -> list[Job]:
    """End the running jobs whose worker is gone: run again if they wrote nothing, else failed.

    Gone: a process of this host that no longer exists (a worker killed, out of memory), or a
    job running past SERVICE_JOB_TIMEOUT on any host (its worker was stopped, or its host died).
    The worker command calls this at start, and each worker every minute (jobs.schedules).
    """
    host = socket.gethostname()
    stale = timezone.now() - timedelta(seconds=settings.SERVICE_JOB_TIMEOUT + 60)
    ended = []
    for job in Job.objects.filter(state=Job.RUNNING):
        if _is_dead_here(job.worker, host) or (job.started_at is not None and job.started_at < stale):
            _recover(job)
            ended.append(job)
    return ended


def _is_dead_here(worker: str, host: str) -> bool:
    name, _, pid = worker.rpartition(":")
    if name != host or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _recover(job: Job) -> None:
    if job.audit_row is None and job.attempts < MAX_ATTEMPTS:
        # Nothing was written (a write begins its audit row before it writes): run it again.
        with transaction.atomic():
            if Job.objects.filter(pk=job.pk, state=Job.RUNNING, worker=job.worker).update(
                    state=Job.QUEUED, started_at=None, worker="", done=0, total=None):
                _enqueue(job)
        return
    status, body = error_answer(WorkerDied(
        "the worker running this job stopped before it finished (killed, out of memory or past "
        "SERVICE_JOB_TIMEOUT). A write may have updated some targets without recording them: run a "
        "drift check, then repeat the operation"))
    # One transaction: a process stopped between the two never leaves the job ended and its row open.
    with audited_transaction():
        if _end(job, Job.FAILED, status, body) and job.audit_row is not None:
            # The operation's own row, begun before it wrote: completed, never a second one.
            details = AuditEntry.objects.filter(pk=job.audit_row).values_list("details", flat=True).first() or {}
            finish(job.audit_row, success=False,
                   details={**{k: v for k, v in details.items() if k != "state"}, "error": WorkerDied.code})
