"""What metrics record of an operation's outcome: its tally, and a full drift check's findings.

Subscribed in ``MetricsConfig.ready()`` (``audit.listeners``): written in the transaction of the
operation's audit row, so a count exists exactly when its row does.
"""

from __future__ import annotations

from collections.abc import Callable

from audit.listeners import Outcome
from metrics import tally
from projects import current as current_project


def outcome_written(outcome: Outcome) -> Callable[[int], None] | None:
    """The tally of a timed operation and the findings of a check of every secret; else None."""
    seconds, checked = outcome.seconds, outcome.notes.get("drift_check")
    if seconds is None and checked is None:
        return None

    def write(row_id: int) -> None:
        if seconds is not None:
            tally.add(outcome.action, outcome.success, seconds, outcome.outcome, current_project.name())
        if checked is not None:
            tally.drift_checked(**checked)

    return write
