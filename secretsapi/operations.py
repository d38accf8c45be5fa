"""The long operations, as the API asks for them: answered in the request when cheap, else a job.

Each operation calls its action (``secretsapi.actions``) and returns the engine's result. Reads
of a small definition (at most SERVICE_INLINE_MAX_BYTES: a validate or render, a rotation,
policy or drift check) run in the request, like any other read, and leave no job; everything
else, and anything sent with ``async: true``, is a job of the task engine (django-tasks'
database backend), run by ``manage.py worker`` in one of two queues: ``writes`` (sync, agent
sync, rotation, the scheduled rotation) and ``reads`` (checks, render, validate), each with
runners of its own, so reads never hold a write behind them. A job's outcome is data (the
result, or the failure's code and message); the API renders it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django_tasks import TaskContext, default_task_backend, task

from audit import origin as audit_origin
from jobs import outcomes, queue, workers
from jobs.errors import NoWorker, TooManyJobs
from jobs.queue import JobRecord
from projects import current as current_project
from projects import registry as project_registry
from secretsapi import database_errors
from secretsapi.actions import auditing, checks, workspaces, writes
from secretsapi.pages import Page
from secretsapi.service.errors import ServiceError
from secretsapi.service.util.progress import Progress

logger = logging.getLogger("secretsapi.jobs")

WRITES, READS = "writes", "reads"
# A synchronous request reads its job's state through the engine's API this often at most.
WAIT_STEP_MAX = 0.05
# A refused job's Retry-After, in seconds.
RETRY_AFTER = 5


def queue_name(kind: str) -> str:
    """The task engine's queue of ``kind`` (``writes`` or ``reads``), named after SERVICE_JOB_QUEUE."""
    name: str = settings.JOB_QUEUES[kind]
    return name


@dataclass(frozen=True)
class Operation:
    name: str
    scope_of: str  # the URL name whose scope asking for it (and reading its job) needs
    queue: str
    run: Callable[[dict[str, Any], str | None, Progress], Any]
    params: Callable[[dict[str, Any]], dict[str, Any]] = dict


def _ws(p: dict[str, Any]) -> workspaces.Workspace:
    # A scheduled run names no environment: the definition's default one.
    return workspaces.workspace(var_files=p["var_files"], environment=p.get("environment"))


def _sync(p: dict[str, Any], actor: str | None, progress: Progress) -> Any:
    return writes.sync(_ws(p), actor=actor, dry_run=p["dry_run"], force=p["force"], secret_name=p["secret_name"],
                       repair=p["repair"], refresh=p.get("refresh", False), progress=progress)


def _agent_sync(p: dict[str, Any], actor: str | None, progress: Progress) -> Any:
    return writes.agent_sync(_ws(p), actor=actor, dry_run=p["dry_run"], force=p["force"],
                             secret_name=p["secret_name"], repair=p["repair"], refresh=p.get("refresh", False),
                             progress=progress)


def _check_rotation(p: dict[str, Any], actor: str | None, progress: Progress) -> Any:
    return checks.check_rotation(_ws(p), actor=actor, secret_name=p["secret_name"])


def _execute_rotation(p: dict[str, Any], actor: str | None, progress: Progress) -> Any:
    return writes.execute_rotation(_ws(p), actor=actor, secret_name=p["secret_name"], force=p["force"],
                                   progress=progress)


def _check_policy(p: dict[str, Any], actor: str | None, progress: Progress) -> Any:
    return checks.check_policy(_ws(p), actor=actor, fail_on_warning=p["fail_on_warning"])


def _check_drift(p: dict[str, Any], actor: str | None, progress: Progress) -> Any:
    return checks.check_drift(_ws(p), actor=actor, secret_name=p["secret_name"], progress=progress)


def _validate_config(p: dict[str, Any], actor: str | None, progress: Progress) -> Any:
    return checks.validate_config(p["config"], actor=actor)


def _render_config(p: dict[str, Any], actor: str | None, progress: Progress) -> Any:
    return checks.render_config(_ws(p), actor=actor, variables=p["variables"])


def _no_content(p: dict[str, Any]) -> dict[str, Any]:
    return {}


def _variable_names(p: dict[str, Any]) -> dict[str, Any]:
    return {"var_files": p["var_files"], "variables": sorted(p["variables"])}


OPERATIONS: dict[str, Operation] = {op.name: op for op in (
    Operation("sync", "sync", WRITES, _sync),
    Operation("agent_sync", "agent-sync", WRITES, _agent_sync),
    Operation("check_rotation", "rotation-check", READS, _check_rotation),
    Operation("execute_rotation", "rotation-execute", WRITES, _execute_rotation),
    Operation("check_policy", "policy-check", READS, _check_policy),
    Operation("check_drift", "drift-check", READS, _check_drift),
    Operation("validate_config", "config-validate", READS, _validate_config, _no_content),
    Operation("render_config", "config-render", READS, _render_config, _variable_names),
)}


def _ignore_progress(done: int, total: int) -> None:
    return None


def cheap(operation: str, payload: dict[str, Any]) -> bool:
    """Whether ``operation`` is answered in the request: a read of a small definition."""
    op = OPERATIONS[operation]
    if op.queue != READS:
        return False
    limit = settings.SERVICE_INLINE_MAX_BYTES
    if operation == "validate_config":
        return len(json.dumps(payload.get("config"), ensure_ascii=False)) <= limit
    try:
        return os.stat(current_project.get().definition).st_size <= limit
    except (OSError, ValueError):
        return True  # no definition: the operation's own error, at once


def run_inline(operation: str, payload: dict[str, Any], *, actor: str | None) -> Any:
    """The operation in the caller's thread; its result, or its error raised."""
    return OPERATIONS[operation].run(payload, actor, _ignore_progress)


def submit(operation: str, payload: dict[str, Any], *, actor: str | None) -> JobRecord:
    """Queue ``operation`` as a job of ``actor``'s; refused at once when no worker runs its queue
    (``NoWorker``) or ``actor``, its project or everyone has too many jobs waiting (``TooManyJobs``)."""
    op = OPERATIONS[operation]
    if not workers.alive(queue_name(op.queue)):
        raise NoWorker(
            f"No job worker is running (no_worker): {operation} runs in `manage.py worker` (`make serve` starts "
            "one), and none has reported a heartbeat lately, so nothing would run this job.")
    if actor is not None and queue.active(actor=actor) >= settings.SERVICE_JOBS_PER_KEY:
        raise TooManyJobs(f"Too many jobs (too_many_jobs): this key has {settings.SERVICE_JOBS_PER_KEY} "
                          "jobs queued or running already (SERVICE_JOBS_PER_KEY); retry once one has ended.",
                          wait=RETRY_AFTER)
    project = current_project.name()
    if queue.active(project=project) >= settings.SERVICE_JOBS_PER_PROJECT:
        raise TooManyJobs(f"Too many jobs (too_many_jobs): the project {project!r} has "
                          f"{settings.SERVICE_JOBS_PER_PROJECT} jobs queued or running already "
                          "(SERVICE_JOBS_PER_PROJECT); retry once one has ended.", wait=RETRY_AFTER)
    if queue.active() >= settings.SERVICE_JOBS_MAX:
        raise TooManyJobs(f"Too many jobs (too_many_jobs): the server has {settings.SERVICE_JOBS_MAX} "
                          "jobs queued or running already (SERVICE_JOBS_MAX); retry shortly.", wait=RETRY_AFTER)
    return enqueue(operation, payload, actor=actor, origin=audit_origin.current(), project=project,
                   environments=current_project.environments())


def enqueue(operation: str, payload: dict[str, Any], *, actor: str | None, origin: str | None = None,
            project: str = current_project.DEFAULT, environments: tuple[str, ...] = ()) -> JobRecord:
    """The job, queued (the scheduler's ticks come here directly: they are never refused).
    ``origin``: where the request came from, which the job's audit rows name; None (a scheduled
    run): the worker that runs it. ``project``: the project it runs in, ``environments`` the ones
    its key may use there (empty: every one)."""
    op = OPERATIONS[operation]
    with transaction.atomic():
        result = run_job.using(queue_name=queue_name(op.queue)).enqueue(
            operation=operation, actor=actor, params=queue.text(op.params(payload)), payload=queue.text(payload),
            origin=origin, project=project, environments=list(environments))
    found = queue.find(str(result.id))
    if found is None:  # pruned or deleted already: the engine's own record of it
        raise ServiceError("the job was queued, then could not be found")
    return found


def wait(job: JobRecord, seconds: float) -> JobRecord:
    """The job once it has ended, or as it is after ``seconds`` (read through the engine's API)."""
    deadline = time.monotonic() + seconds
    delay = 0.005
    result = default_task_backend.get_result(job.id)
    while not result.is_finished:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        time.sleep(min(delay, left))
        delay = min(delay * 2, WAIT_STEP_MAX)
        result.refresh()
    found = queue.find(job.id) or job
    # Ended by the engine, its failure not stored yet (jobs.queue.record_of): read until it is.
    while result.is_finished and found.state not in ("succeeded", "failed") and time.monotonic() < deadline:
        time.sleep(min(delay, max(deadline - time.monotonic(), 0)))
        delay = min(delay * 2, WAIT_STEP_MAX)
        found = queue.find(job.id) or found
    return found


def failure_of(exc: Exception) -> dict[str, Any]:
    """An operation's failure as data: its code and its message (written for users, never a
    value); an unexpected error is logged here and says only ``internal_error``."""
    if isinstance(exc, ServiceError):
        return {"code": exc.code, "message": exc.message}
    if database_errors.unreachable(exc):
        logger.warning("Database unavailable during a job: %s", exc)
        return {"code": "database_unavailable", "message": None}
    logger.error("A job's operation failed unexpectedly", exc_info=exc)
    return {"code": "internal_error", "message": None}


def as_data(result: Any) -> Any:
    """The engine's result (a frozen dataclass) as JSON data."""
    return dataclasses.asdict(result) if dataclasses.is_dataclass(result) and not isinstance(result, type) else result


@task(takes_context=True, queue_name=settings.JOB_QUEUES[WRITES])
def run_job(context: TaskContext, *, operation: str, actor: str | None, params: str,
            payload: str | None = None, origin: str | None = None, project: str = current_project.DEFAULT,
            environments: list[str] | None = None) -> dict[str, Any]:
    """The task every job is: run ``operation`` for ``actor`` with ``payload`` (JSON text, as
    jobs.queue keeps it) in ``project`` (looked up now: a project removed since fails the job);
    its result as data, or raise. Its rows name ``origin`` (the request's), else the worker running it."""
    job_id = str(context.task_result.id)
    worker_id = context.task_result.worker_ids[-1]
    reporter = workers.Reporter(worker_id, job_id)
    token = auditing.audit_row_started.set(reporter.audit_row)
    try:
        with audit_origin.using(origin or audit_origin.worker(worker_id)):
            found = None if project == current_project.DEFAULT else project_registry.find(project)
            with current_project.using(found, tuple(environments or ())):
                result = OPERATIONS[operation].run(queue.data(payload) or {}, actor, reporter)
    except Exception as exc:
        raise outcomes.failing(job_id, {"failure": queue.text(failure_of(exc)), **reporter.figures()}) from None
    finally:
        auditing.audit_row_started.reset(token)
    return {"result": queue.text(as_data(result)), **reporter.figures()}


def read_job(job_id: str, *, actor: str | None, everyone: bool, project: str | None = None) -> JobRecord | None:
    """The job if the reader may see it (its own, or any with ``everyone``; of ``project``, when
    named), audited; else None, as for a job that does not exist (a reader learns nothing of
    others' jobs)."""
    found = queue.find(job_id)
    if found is None or not (everyone or found.actor == actor) or (project is not None and found.project != project):
        return None
    with auditing.audited("read_job", f"job:{found.id}", actor, {"operation": found.operation}) as facts:
        facts["state"] = found.state
    return found


def read_jobs(
    *, actor: str | None, everyone: bool, operations: list[str], limit: int, offset: int, state: str | None = None,
    operation: str | None = None, since: datetime | None = None, project: str | None = None,
) -> Page[JobRecord]:
    """A newest-first page of the jobs the reader may see, of ``operations`` only (those its scopes
    allow it to ask for), of ``project`` when named: never the requests' payloads."""
    named = {"state": state, "operation": operation, "since": since and since.isoformat(), "project": project}
    request = {"limit": limit, "offset": offset, **{k: v for k, v in named.items() if v is not None}}
    with auditing.audited("read_jobs", "jobs", actor, request) as facts:
        page = queue.page(owner=actor, everyone=everyone, operations=operations, limit=limit, offset=offset,
                          state=state, operation=operation, since=since, project=project)
        facts["returned"] = len(page)
    return page


def warm_up(*, parse: bool = True) -> None:
    """Make this process ready to run any operation at once: the engine's operations imported,
    and (``parse``) the served definition parsed and its shared parse stored, as a first request
    would. A worker does both at start; a web worker only imports (gunicorn starts several)."""
    from secretsapi import service

    for name in ("sync", "agent_sync", "detect_drift", "execute_rotation", "check_policies", "validate_document",
                 "render_definition", "without_recorded_values"):
        getattr(service, name)
    if parse:
        with contextlib.suppress(ServiceError):  # no definition yet, or an invalid one: each job says so
            workspaces.workspace().definition()
