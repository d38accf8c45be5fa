"""Rotation periods: ``<N>d``, ``<N>w``, ``<N>m``, ``<N>y`` parsed to a number of days."""

from __future__ import annotations

import re

_PERIOD = re.compile(r"([0-9]+)([dwmy])", re.IGNORECASE)
_DAYS_PER_UNIT = {"d": 1, "w": 7, "m": 30, "y": 365}
# Far beyond any real period, and keeps "now + period" inside what datetime can represent.
MAX_DAYS = 1_000_000


def parse_period(text: object) -> int:
    """Return the number of days in ``text``; ValueError for anything but ``<N>[dwmy]``, N > 0."""
    if not isinstance(text, str):
        # ValueError (not TypeError) for every bad input: callers turn it into one validation message.
        raise ValueError(f"{text!r} is not a valid period")
    match = _PERIOD.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a valid period")
    days = int(match.group(1)) * _DAYS_PER_UNIT[match.group(2).lower()]
    if days <= 0:
        raise ValueError(f"{text!r} is not a valid period (must be greater than zero)")
    if days > MAX_DAYS:
        raise ValueError(f"{text!r} is not a valid period (longer than {MAX_DAYS} days)")
    return days
