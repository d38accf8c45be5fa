"""Reading jobs, audited like every other read; only jobs of operations the caller may call."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from datetime import datetime
from typing import Any

from apikeys.scopes import REQUIRED_SCOPE
from jobs.models import Job
from jobs.operations import OPERATIONS
from secretsapi.actions import audited


def operations_allowed(scopes: Collection[str]) -> list[str]:
    """The operations whose jobs a caller with ``scopes`` may read: those it may ask for."""
    return [name for name, op in OPERATIONS.items() if REQUIRED_SCOPE[op.scope_of] in scopes]


def find_job(job_id: str) -> Job | None:
    """The job, or None when there is none (or the id is not one a job could have)."""
    try:
        key = uuid.UUID(job_id)
    except ValueError:
        return None
    return Job.objects.filter(pk=key).first()


def read_job(job: Job, *, actor: str | None) -> Job:
    with audited("read_job", f"job:{job.pk}", actor, {"operation": job.operation}) as facts:
        facts["state"] = job.state
    return job


def read_jobs(
    *, actor: str | None, operations: list[str], limit: int, offset: int, state: str | None = None,
    operation: str | None = None, since: datetime | None = None,
) -> list[Job]:
    """A newest-first page of the jobs of ``operations`` (the ones the caller may read)."""
    named = {"state": state, "operation": operation, "since": since and since.isoformat()}
    request = {"limit": limit, "offset": offset, **{k: v for k, v in named.items() if v is not None}}
    filters: dict[str, Any] = {"operation__in": [operation] if operation else operations}
    if operation and operation not in operations:
        filters["operation__in"] = []
    if state:
        filters["state"] = state
    if since:
        filters["created_at__gte"] = since
    with audited("read_jobs", "jobs", actor, request) as facts:
        # The summaries only: a page never carries the requests' payloads or the results.
        page = list(Job.objects.filter(**filters).defer("payload", "result").order_by("-created_at", "-id")
                    [offset: offset + limit])
        facts["returned"] = len(page)
    return page
