"""The bridge between interfaces and the engine: settings + service call + one audit row.

Views and management commands call these functions, never the service directly, so the
API and the CLI behave and audit identically. ``actor`` names who acted in the audit row.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from audit.models import AuditEntry
from audit.recorder import record
from secretsapi.service.errors import ServiceError


@contextmanager
def audited(
    action: str, resource: str, actor: str | None, details: dict[str, Any] | None = None
) -> Iterator[dict[str, Any]]:
    """Write one audit row for the enclosed operation, successful or not.

    The caller adds result facts (names, counts, hashes; never values) to the yielded dict.
    A failure to write the row propagates: an operation must not complete unrecorded.
    """
    details = dict(details or {})
    try:
        yield details
    except ServiceError as exc:
        record(action=action, resource=resource, user=actor, success=False,
               details={**details, "error": exc.code})
        raise
    except Exception:
        record(action=action, resource=resource, user=actor, success=False,
               details={**details, "error": "internal_error"})
        raise
    record(action=action, resource=resource, user=actor, success=True, details=details)


def read_audit_logs(
    *, actor: str | None, limit: int, offset: int, action: str | None, resource: str | None
) -> list[AuditEntry]:
    filters = {k: v for k, v in {"action": action, "resource": resource}.items() if v}
    request = {"limit": limit, "offset": offset, **filters}
    with audited("read_audit_logs", "audit", actor, request) as facts:
        # Slicing a filtered, ordered queryset is LIMIT/OFFSET over a matching index: no count.
        entries = list(AuditEntry.objects.filter(**filters).order_by("-timestamp", "-id")[offset : offset + limit])
        facts["returned"] = len(entries)
    return entries
