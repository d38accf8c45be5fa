"""Lengths of time: the one grammar every period, lifetime and ``--since`` is read with.

A length is a whole number and one unit, with no space: ``90d``, ``12h``, ``30min``. It has two
readings, documented in docs/definitions.md ("Periods and durations"):

- a **period**, in a definition (``rotation_period``, a rotation policy's ``max_age``), in whole
  days, with SecretZero's units and meanings: ``d``, ``w``, ``m`` (a month of 30 days) and ``y``
  (365 days), upper or lower case. A definition means there what it means under SecretZero.
- a **duration**, everywhere else (an API key's ``--expires`` and ``--grace``, the admin's
  "Expires in", the command lines' ``--since`` and ``--until``): ``s``, ``min``, ``h``, ``d``,
  ``w``, ``mo`` (30 days) and ``y`` (365 days). A bare ``m`` is refused there: it means a month
  in a definition and a minute almost everywhere else, so the error asks which.

Every refusal names the accepted units. Errors are ``ValueError``s whose text starts with the
input's ``repr`` (the definition checker replaces it when the value came from the environment).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

# Far beyond any real period, and keeps "now + period" inside what datetime can represent.
MAX_DAYS = 1_000_000

_LENGTH = re.compile(r"([0-9]+)([a-z]+)", re.IGNORECASE)
_PERIOD_DAYS = {"d": 1, "w": 7, "m": 30, "y": 365}
PERIOD_UNITS = "d (days), w (weeks), m (months of 30 days) or y (years of 365 days)"
_DURATION_SECONDS = {"s": 1, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "mo": 30 * 86400, "y": 365 * 86400}
DURATION_UNITS = ("s (seconds), min (minutes), h (hours), d (days), w (weeks), mo (months of 30 days) "
                  "or y (years of 365 days)")


class PeriodError(ValueError):
    """A length of time that cannot be read; the message says which units are accepted."""


def parse_period(text: object) -> int:
    """The number of days in a definition's period, ``<N>`` and one of d, w, m, y (N > 0)."""
    if not isinstance(text, str):
        # ValueError (not TypeError) for every bad input: callers turn it into one validation message.
        raise PeriodError(f"{text!r} is not a valid period: {_period_rule()}")
    match = _LENGTH.fullmatch(text.strip())
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _PERIOD_DAYS:
        raise PeriodError(f"{text!r} is not a valid period: {_period_rule()}{_period_hint(match, unit)}")
    days = int(match.group(1)) * _PERIOD_DAYS[unit]
    if days <= 0:
        raise PeriodError(f"{text!r} is not a valid period (must be greater than zero)")
    if days > MAX_DAYS:
        raise PeriodError(f"{text!r} is not a valid period (longer than {MAX_DAYS} days)")
    return days


def _period_rule() -> str:
    return f"write a whole number and a unit, {PERIOD_UNITS}, as in 90d"


def _period_hint(match: re.Match[str] | None, unit: str) -> str:
    if match is None:
        return ""
    if unit == "mo":
        return f" (in a definition a month is m, as SecretZero reads it: {match.group(1)}m)"
    if unit in _DURATION_SECONDS:
        return " (a rotation period counts whole days: hours, minutes and seconds are not periods)"
    return ""


def parse_duration(text: str, *, allow_zero: bool = False) -> timedelta:
    """A length of time outside definitions: ``<N>`` and one of s, min, h, d, w, mo, y.

    ``allow_zero``: ``0`` (alone or with a unit) is no time at all, else refused. A bare ``m``
    is refused as ambiguous (minutes or months), naming both spellings."""
    given = text.strip()
    if allow_zero and given == "0":
        return timedelta(0)
    match = _LENGTH.fullmatch(given)
    unit = match.group(2).lower() if match else ""
    if match is not None and unit == "m":
        count = match.group(1)
        raise PeriodError(f"{text!r} is ambiguous: write {count}min for minutes or {count}mo for months "
                          "(m means a month only in a definition's rotation_period)")
    if match is None or unit not in _DURATION_SECONDS:
        raise PeriodError(f"{text!r} is not a valid duration: write a whole number and a unit, {DURATION_UNITS}, "
                          "as in 90d or 12h")
    seconds = int(match.group(1)) * _DURATION_SECONDS[unit]
    if seconds == 0 and not allow_zero:
        raise PeriodError(f"{text!r} is not a valid duration (must be greater than zero)")
    if seconds > MAX_DAYS * 86400:
        raise PeriodError(f"{text!r} is not a valid duration (longer than {MAX_DAYS} days)")
    return timedelta(seconds=seconds)


def parse_instant(text: str, now: datetime) -> datetime:
    """A moment: ISO 8601 (``2026-01-02``, ``2026-01-02T03:04:05Z``; UTC without a zone), or a
    duration before ``now`` (``2h``: two hours ago)."""
    given = text.strip()
    if _LENGTH.fullmatch(given):
        try:
            return now - parse_duration(given)
        except OverflowError:
            raise PeriodError(f"{text!r} is too long ago") from None
    try:
        moment = datetime.fromisoformat(given)
    except ValueError:
        raise PeriodError(f"{text!r} is neither an ISO 8601 time (2026-01-02T03:04:05Z) nor a duration ago: "
                          f"write a whole number and a unit, {DURATION_UNITS}, as in 2h") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
