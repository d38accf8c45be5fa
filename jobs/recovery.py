"""Taking back the jobs of workers that died (killed, out of memory, their host gone).

A job is its dead worker's when its last claim (``worker_ids``) names a worker whose heartbeat
is older than six beats, or that has no row at all. A job that wrote nothing (its worker's row
names no audit row begun for it: a check, or a write that had not begun) is queued again,
once; a write that had begun ends ``failed`` (``worker_died``), with its audit row completed in
the same transaction (never a second row). Every worker runs this at start and then every beat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from audit.models import AuditEntry
from audit.recorder import STARTED, complete_kept, finish
from audit.write_gate import audited_transaction
from jobs import outcomes, queue
from jobs.models import WorkerBeat
from jobs.workers import dead_before
from secretsapi.service.errors import WorkerDied

# A job is run at most this many times (a first run and one more after its worker died).
MAX_ATTEMPTS = 2

WORKER_DIED = ("the worker running this job stopped before it finished (killed, out of memory or its host "
               "gone). A write may have updated some targets without recording them: run a drift check, then "
               "repeat the operation")


@dataclass(frozen=True)
class Recovered:
    job: str
    requeued: bool


def recover(*, gone: str | None = None) -> list[Recovered]:
    """End or requeue every running job whose worker is dead (or is ``gone``: a runner of this
    process that failed and starts again); what was done."""
    running = list(DBTaskResult.objects.filter(status="RUNNING").only("id", "worker_ids", "started_at"))
    if not running:
        return []
    last = {row.id: (row.worker_ids or [None])[-1] for row in running}
    beats = {b.id: b for b in WorkerBeat.objects.filter(id__in=[w for w in last.values() if w])}
    cutoff = dead_before()
    done = []
    for row in running:
        beat = beats.get(last[row.id] or "")
        if beat is not None and beat.seen_at >= cutoff and beat.id != gone:
            continue
        audit_row = beat.audit_row if beat is not None and beat.job == row.id else None
        requeue = audit_row is None and len(row.worker_ids or []) < MAX_ATTEMPTS
        if _take_back(row, audit_row, requeue=requeue):
            done.append(Recovered(str(row.id), requeue))
        if beat is not None and beat.id != gone:
            WorkerBeat.objects.filter(id=beat.id, seen_at__lt=cutoff).delete()
    WorkerBeat.objects.filter(seen_at__lt=cutoff, job__isnull=True).delete()
    return done


def _take_back(row: DBTaskResult[..., Any], audit_row: int | None, *, requeue: bool) -> bool:
    """One job, unless another worker's recovery took it first (the conditional update: a job
    taken back and claimed again has another ``started_at``)."""
    job_id = row.id
    still_running = DBTaskResult.objects.filter(pk=job_id, status="RUNNING", started_at=row.started_at)
    if requeue:
        with transaction.atomic():
            return bool(still_running.update(status="READY", started_at=None))
    # A runner of this process whose job ended while the database was away (``gone``) kept the
    # job's failure and its audit row's outcome: those are written, not "the worker died".
    kept = outcomes.take_failing(job_id)
    failure = kept or {"failure": queue.text({"code": WorkerDied.code, "message": WORKER_DIED})}
    try:
        # One transaction: a process stopped between the two never leaves the job ended and its row open.
        with audited_transaction():
            if not still_running.update(status="FAILED", finished_at=timezone.now()):
                return False
            outcomes.fail(job_id, failure, audit_row=audit_row)
            queue.forget_request(job_id)
            if audit_row is not None:
                details = AuditEntry.objects.filter(pk=audit_row).values_list("details", flat=True).first() or {}
                if details.get("state") == STARTED and not complete_kept(audit_row):
                    # The operation's own row, begun before it wrote: completed, never a second one.
                    finish(audit_row, success=False, details={
                        **{k: v for k, v in details.items() if k != "state"}, "error": WorkerDied.code})
    except Exception:
        if kept is not None:
            outcomes.failing(job_id, kept)  # kept for the next try
        raise
    return True
