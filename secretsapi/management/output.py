"""What the command lines print and how they exit, without Django's settings: the exit codes, a
``Failure`` and its JSON, columns and times. ``secretsctl --addr`` prints through these (and
``reports``) without setting Django up, as a client of a remote service has no settings of its own.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime

from django.core.management.base import CommandError

# Exit codes: 0 clean, 1 error, 2 a finding (drift, not compliant, rotation due, not generated).
EXIT_ERROR = 1
EXIT_FINDING = 2


class Failure(CommandError):
    """A failure the command reports as ``{"error", "detail"}`` (one line without ``--json``).

    ``emitted``: the command already printed its result (a finding, or a sync with errors), so
    under ``--json`` nothing more goes to stdout.
    """

    def __init__(self, error: str, detail: str, *, returncode: int = EXIT_ERROR, emitted: bool = False) -> None:
        super().__init__(detail, returncode=returncode)
        self.error = error
        self.detail = detail
        self.emitted = emitted


def error_json(failure: Failure) -> str:
    return json.dumps({"error": failure.error, "detail": failure.detail}, indent=2)


def columns(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Rows as lines of left-aligned columns as wide as their widest cell (the last one unpadded)."""
    if not rows:
        return []
    widths = [max(map(len, column)) for column in itertools.zip_longest(*rows, fillvalue="")]
    return [indent + "  ".join([*map(str.ljust, row[:-1], widths), row[-1]]) if row else indent for row in rows]


# What format_time writes (the lockfile's times): read as text, without a datetime per cell.
_UTC_STAMP = re.compile(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?\+00:00", re.ASCII)


def to_the_second(stamp: str | None) -> str:
    """An ISO 8601 time as ``2026-01-02 03:04:05`` (UTC; naive times are UTC, as in the lockfile)."""
    if not stamp:
        return "-"
    utc = _UTC_STAMP.fullmatch(stamp)
    if utc is not None:
        return f"{utc[1]} {utc[2]}"
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
