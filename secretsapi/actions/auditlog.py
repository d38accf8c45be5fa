"""Reading the audit log: a page, an export (or a follow), the admin's activity charts."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from audit import activity
from audit import export as audit_export
from audit.models import AuditEntry, AuditMention
from audit.recorder import fit_name
from secretsapi.actions.auditing import audited
from secretsapi.pages import Page


def read_audit_logs(
    *, actor: str | None, limit: int, offset: int, action: str | None = None, resource: str | None = None,
    success: bool | None = None, user: str | None = None, since: datetime | None = None,
    until: datetime | None = None, secret: str | None = None, project: str | None = None,
) -> Page[AuditEntry]:
    """A newest-first page; ``since`` is inclusive, ``until`` exclusive; ``secret`` by mentions;
    ``project``: the service project's rows only."""
    named = {"action": action, "resource": resource, "success": success, "user": user, "secret": secret,
             "since": since and since.isoformat(), "until": until and until.isoformat(), "project": project}
    request = {"limit": limit, "offset": offset, **{k: v for k, v in named.items() if v is not None}}
    filters: dict[str, Any] = {k: v for k, v in {"action": action, "resource": resource, "user": user,
                                                 "project": project}.items() if v}
    if success is not None:
        # As ``IN``: a plain boolean filter compiles to ``WHERE NOT success``, which no index serves.
        filters["success__in"] = [success]
    bounds = {k: v for k, v in {"timestamp__gte": since, "timestamp__lt": until}.items() if v is not None}
    with audited("read_audit_logs", "audit", actor, request) as facts:
        entries = _audit_page(limit, offset, filters, bounds, secret)
        facts["returned"] = len(entries)
    return entries


def _audit_page(
    limit: int, offset: int, filters: dict[str, Any], bounds: dict[str, datetime], secret: str | None
) -> Page[AuditEntry]:
    # The page's ids come from the index matching the filter (it holds timestamp and id, so
    # skipped rows are never read from the table), then only those rows are read: a large
    # offset costs an index-only scan. One statement (the ids as a subquery); the total is a
    # second, a count over the same index.
    newest_first = ("-timestamp", "-id")
    page_ids: QuerySet[Any, Any]
    if secret:
        # The mentions' own index (secret, timestamp, entry) is the scan; other filters look
        # each candidate row up by its key.
        matching: QuerySet[Any, Any] = AuditMention.objects.filter(
            secret=fit_name(secret), **bounds, **{f"entry__{k}": v for k, v in filters.items()})
        page_ids = matching.order_by("-timestamp", "-entry_id").values("entry_id")[offset : offset + limit]
    else:
        matching = AuditEntry.objects.filter(**filters, **bounds)
        page_ids = matching.order_by(*newest_first).values("id")[offset : offset + limit]
    return Page(AuditEntry.objects.filter(id__in=page_ids).order_by(*newest_first), matching.count())


def export_audit_logs(
    *, actor: str | None, where: audit_export.AuditFilter, offset: int = 0, limit: int | None = None,
    follow_every: float | None = None, after_id: int = 0, sleep: Callable[[float], None] = time.sleep,
) -> Iterator[AuditEntry]:
    """Every matching row, oldest first, read a chunk at a time (``audit.export``); with
    ``follow_every`` (seconds), then every new matching row as it is written, until closed.
    ``after_id``: only rows written after that one (a follower that printed a page first).
    ``sleep``: the follower's wait between looks (the command line's stops on Ctrl-C).

    The export's own row is written before the first chunk is read (a stream has no end to
    write it at when its reader goes away), naming the filters.
    """
    request: dict[str, Any] = {k: v.isoformat() if isinstance(v, datetime) else v
                               for k, v in asdict(where).items() if v is not None}
    request.update({"offset": offset, "follow": follow_every is not None})
    if limit is not None:
        request["limit"] = limit
    if after_id:
        request["after_id"] = after_id
    with audited("export_audit_logs", "audit", actor, request):
        pass
    if follow_every is None:
        return audit_export.rows(where, after_id=after_id, offset=offset, limit=limit)
    return audit_export.follow(where, every=follow_every, after_id=after_id, sleep=sleep)


def audit_activity(*, actor: str | None, days: int) -> activity.Activity:
    """Operations and rotations per day over the last ``days`` days (the admin's charts)."""
    with audited("read_audit_activity", "audit", actor, {"days": days}):
        return activity.activity(days)
