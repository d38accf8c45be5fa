"""``audited``: one audit row for every operation, and what the row's listeners are told.

Every action runs its operation inside ``audited``, which writes the row (``audit.listeners.settle``:
the apps that listen to outcomes record theirs in the row's transaction). ``actor`` names who
acted in the row.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from audit.listeners import Outcome, settle
from audit.recorder import begin, fit, keep_unwritten
from projects import current as current_project
from secretsapi import database_errors
from secretsapi.service.errors import ServiceError
from secretsapi.service.workspace import Workspace
from webhooks.drift_seen import DriftFound

# A failed row's ``message`` is clipped (a definition's errors can run long).
MESSAGE_MAX = 1000


class Facts(dict[str, Any]):
    """What ``audited`` yields: the row's details, and ``succeeded``, the operation's outcome.

    An operation whose result reports a failure (a secret that failed, an error) sets
    ``succeeded = False``: its row then says ``success: false``, with what did succeed in the
    details beside what failed.
    """

    succeeded: bool = True
    # A finding that is no failure, recorded as the row's outcome (``drift``) when it succeeded.
    finding: str | None = None
    # Not in the row (it can be long): lock key -> every target written, for the webhook payloads.
    written: dict[str, list[str]] | None = None
    # A drift check's findings, for ``drift.detected`` once per new drift (``webhooks.drift_seen``).
    drift: DriftFound | None = None
    # A check of every secret: what it found, kept for GET /metrics' drift gauges (``metrics.tally``).
    drift_check: dict[str, Any] | None = None


# Told the id of an operation's audit row as soon as it exists (``begin``): a job keeps it, so
# that a job whose worker died completes that row rather than writing a second one.
audit_row_started: ContextVar[Callable[[int], None] | None] = ContextVar("audit_row_started", default=None)


# The operations whose rows carry ``duration_seconds``, counted for GET /metrics (metrics.listener).
TIMED = frozenset({"sync", "agent_sync", "check_rotation", "execute_rotation", "check_policy", "check_drift",
                   "validate_config", "render_config"})


@contextmanager
def audited(
    action: str, resource: str, actor: str | None, details: dict[str, Any] | None = None, *, changes: bool = False,
    ws: Workspace | None = None, project: str | None = None, in_project: bool = False,
) -> Iterator[Facts]:
    """Write one audit row for the enclosed operation, successful or not.

    The caller adds result facts (names, counts, hashes; never values) to the yielded dict, and
    clears its ``succeeded`` when the result reports a failure. An exception marks the row
    failed with the error's code, and the exception is marked ``audited`` so the error handler
    writes no second row. A failure to write the row propagates: an operation must not complete
    unrecorded. An operation that ``changes`` targets or the lockfile gets its row before it
    starts (an audit database that refuses it stops the operation) and completed after it ends.
    The row names the service's project (``projects.current``) and the definition, its
    ``metadata.project`` and environment of ``ws`` (or only ``project``, the ``metadata.project``
    of a definition sent in a request), and where the call came from (``audit.origin``).
    """
    facts = Facts(details or {})
    context = _context(ws, project, in_project) if changes else None
    row_id = (begin(action=action, resource=resource, user=actor, details=facts, context=context)
              if changes else None)
    if row_id is not None and (listener := audit_row_started.get()) is not None:
        listener(row_id)
    started = time.monotonic()

    def write(success: bool, details: dict[str, Any], finding: str | None = None) -> None:
        outcome = finding if success and finding else ("ok" if success else "failed")
        seconds = round(time.monotonic() - started, 3) if action in TIMED else None
        if seconds is not None:
            details = {**details, "duration_seconds": seconds}
        notes = {name: note for name, note in (("written", facts.written), ("drift", facts.drift),
                                               ("drift_check", facts.drift_check)) if note is not None}
        # Its listeners (webhook events, the metrics' count) commit with the row, or none does.
        told = Outcome(action=action, resource=resource, actor=actor, success=success, outcome=outcome,
                       details=details, context=context or _context(ws, project, in_project), seconds=seconds,
                       notes=notes)
        try:
            settle(told, row_id)
        except Exception as exc:
            # A database gone before the transaction could even start: the begun row's outcome is
            # still kept, to be written once it answers (what its listeners record is not).
            if row_id is not None and database_errors.unreachable(exc):
                keep_unwritten(row_id, success=success, details=details, outcome=outcome)
            raise

    try:
        yield facts
    except ServiceError as exc:
        # An error may carry facts of its own (e.g. the targets a write changed before it failed).
        # Its message is the one the caller is shown (written for users, never holding a value).
        write(False, {**facts, **getattr(exc, "details", {}), "error": exc.code,
                      "message": fit(exc.message, MESSAGE_MAX)})
        exc.audited = True  # type: ignore[attr-defined]
        raise
    except Exception as exc:
        # The database going away mid-operation (a write's lock session ended with it) is named.
        code = "database_unavailable" if database_errors.unreachable(exc) else "internal_error"
        write(False, {**facts, "error": code})
        exc.audited = True  # type: ignore[attr-defined]
        raise
    write(facts.succeeded, dict(facts), facts.finding)


def _context(ws: Workspace | None, project: str | None, in_project: bool = False) -> dict[str, str | None]:
    """Where an operation ran, for its row: the service's project (``projects.current``), the
    definition's path, its ``metadata.project`` and the environment in effect. A definition that
    cannot be read (the operation says why) names only its path and the environment asked for.
    ``project``: a sent definition's ``metadata.project``. A row without ``ws`` names the service's
    project when one was named (a ``/projects/{name}/`` path) or ``in_project`` (it ran in the
    current project: a sent definition checked against its lockfile)."""
    served = current_project.name() if ws is not None or in_project or current_project.explicit() else None
    if ws is None:
        return {"project": served, "definition_project": project}
    found: tuple[str | None, str | None] = (None, ws.environment)
    with contextlib.suppress(ServiceError, OSError, ValueError):
        found = ws.context()
    return {"definition": str(ws.definition_path), "project": served, "definition_project": found[0],
            "environment": found[1]}
