"""What webhooks record of an operation's outcome: its events, in the outbox, with its audit row.

Subscribed in ``WebhooksConfig.ready()`` (``audit.listeners``): the events an outcome raises
(``webhooks.events``) and a drift check's new drift (``webhooks.drift_seen``) are written in
the transaction of the row, so an event exists exactly when its row does.
"""

from __future__ import annotations

from collections.abc import Callable

from audit import origin as audit_origin
from audit.listeners import Outcome
from webhooks import drift_seen, events, outbox


def outcome_written(outcome: Outcome) -> Callable[[int], None] | None:
    """The outbox's rows for ``outcome``, once its row is written; None when it raises no event."""
    raised = events.raised(outcome.action, outcome.success, outcome.details, outcome.notes.get("written"))
    drift: drift_seen.DriftFound | None = outcome.notes.get("drift")
    if not raised and drift is None:
        return None
    context = {**outcome.context, "origin": audit_origin.current()}

    def write(row_id: int) -> None:
        found = list(raised)
        if drift is not None:
            found += events.drift_detected(outcome.details, drift_seen.new_drift(drift))
        outbox.enqueue(found, actor=outcome.actor, audit_row=row_id, context=context)

    return write
