"""``record()``: the only writer of audit rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from audit.models import AuditEntry


def record(
    *,
    action: str,
    resource: str,
    user: str | None,
    success: bool,
    details: Mapping[str, Any] | None = None,
) -> AuditEntry:
    """Write one row. Errors propagate: an operation must not succeed unrecorded.

    ``details`` must hold names, counts and hashes only, never secret values.
    """
    return AuditEntry.objects.create(
        action=action,
        resource=resource,
        user=user,
        success=success,
        details=dict(details or {}),
    )
