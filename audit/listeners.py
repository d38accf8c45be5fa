"""What listens to an operation's audit row: the apps that record something of every outcome.

An action writes its operation's row through ``settle``; the apps that keep something of each
outcome (webhooks: its events in the outbox; metrics: its tally) subscribe with ``listen`` in
their ``AppConfig.ready()``, so an action never calls them and this floor never imports theirs.
Each listener is asked, before the row is written, what it will record of the outcome; when any
will, the row and all they record are one transaction (``audited_transaction``): everything
commits, or nothing does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from audit.recorder import finish, mention_ahead, record
from audit.write_gate import audited_transaction


@dataclass(frozen=True)
class Outcome:
    """An operation's outcome as its row records it, and what the action tells listeners beside."""

    action: str
    resource: str
    actor: str | None
    success: bool
    outcome: str  # ``ok``, ``failed`` or a finding (``drift``)
    details: Mapping[str, Any]  # the row's details
    context: Mapping[str, str | None]  # where it ran, as the row says (``recorder.where``)
    seconds: float | None = None  # its duration, for the operations whose rows carry one
    # What the row does not keep (names only, never a value): ``written`` (lock key -> every
    # target written), ``drift`` (a drift check's findings), ``drift_check`` (its figures).
    notes: Mapping[str, Any] = field(default_factory=dict)


# Given the outcome before its row is written: what the listener writes once the row exists
# (called with the row's id, inside the row's transaction), or None when it records nothing.
Listener = Callable[[Outcome], Callable[[int], None] | None]

_listeners: list[Listener] = []


def listen(listener: Listener) -> None:
    """Be told every outcome ``settle`` writes (once, however often an app is made ready)."""
    if listener not in _listeners:
        _listeners.append(listener)


def settle(outcome: Outcome, row_id: int | None = None) -> int:
    """Write ``outcome``'s row (or complete ``row_id``, begun by ``recorder.begin``) and what each
    listener records of it, in one transaction; the row's id. Errors propagate, rolling back all."""
    writes = [write for write in (listener(outcome) for listener in _listeners) if write is not None]
    if row_id is not None:  # a long list of mentions must not hold the write lock with the outcome
        mention_ahead(row_id, outcome.resource, outcome.details)
    with audited_transaction() if writes else contextlib.nullcontext():
        if row_id is None:
            row_id = record(action=outcome.action, resource=outcome.resource, user=outcome.actor,
                            success=outcome.success, details=outcome.details, outcome=outcome.outcome,
                            context=outcome.context)
        else:
            finish(row_id, success=outcome.success, details=outcome.details, outcome=outcome.outcome, mentioned=True)
        for write in writes:
            write(row_id)
    return row_id
