"""The one grammar of lengths of time: a definition's periods (SecretZero's d, w, m, y, in days),
durations elsewhere (s, min, h, d, w, mo, y; a bare m refused), and moments for --since."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from secretsapi.service.definition.periods import PeriodError, parse_duration, parse_instant, parse_period

NOW = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "days"),
    [("1d", 1), ("90d", 90), ("2w", 14), ("3m", 90), ("1y", 365), ("1Y", 365), ("6M", 180), (" 30d ", 30)],
)
def test_valid_periods_convert_to_days(text: str, days: int) -> None:
    assert parse_period(text) == days


@pytest.mark.parametrize("text", ["90x", "0d", "-1d", "d", "90", "1.5d", "", "9 0d", "1000000000d", "1h", "3mo"])
def test_invalid_periods_raise_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="is not a valid period"):
        parse_period(text)


@pytest.mark.parametrize("text", ["90x", "1h", "soon", "3mo"])
def test_a_period_error_lists_every_unit_a_definition_accepts(text: str) -> None:
    with pytest.raises(PeriodError) as refused:
        parse_period(text)
    assert str(refused.value).startswith(f"{text!r} is not a valid period: write a whole number and a unit, "
                                         "d (days), w (weeks), m (months of 30 days) or y (years of 365 days)")


def test_hours_in_a_definition_are_refused_as_not_whole_days() -> None:
    with pytest.raises(PeriodError, match="a rotation period counts whole days"):
        parse_period("12h")


def test_mo_in_a_definition_points_to_secretzeros_m() -> None:
    with pytest.raises(PeriodError, match=r"in a definition a month is m, as SecretZero reads it: 3m"):
        parse_period("3mo")


@pytest.mark.parametrize("value", [90, None, ["90d"]])
def test_non_strings_are_not_periods(value: object) -> None:
    with pytest.raises(ValueError, match="is not a valid period: write a whole number"):
        parse_period(value)


@pytest.mark.parametrize(
    ("text", "length"),
    [("45s", timedelta(seconds=45)), ("30min", timedelta(minutes=30)), ("12h", timedelta(hours=12)),
     ("90d", timedelta(days=90)), ("2w", timedelta(weeks=2)), ("6mo", timedelta(days=180)),
     ("1y", timedelta(days=365)), ("12H", timedelta(hours=12)), ("30MIN", timedelta(minutes=30))],
)
def test_durations_read_every_unit(text: str, length: timedelta) -> None:
    assert parse_duration(text) == length


@pytest.mark.parametrize("text", ["30m", "1M"])
def test_a_bare_m_is_refused_with_both_spellings(text: str) -> None:
    count = text[:-1]
    with pytest.raises(PeriodError, match=f"is ambiguous: write {count}min for minutes or {count}mo for months"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["soon", "90", "1.5h", "1x", "", "h", "-1h"])
def test_a_duration_error_lists_the_units(text: str) -> None:
    with pytest.raises(PeriodError) as refused:
        parse_duration(text)
    assert "s (seconds), min (minutes), h (hours), d (days), w (weeks), mo (months of 30 days) or y (years of " \
           "365 days)" in str(refused.value)


def test_zero_is_no_time_only_where_allowed() -> None:
    assert parse_duration("0", allow_zero=True) == timedelta(0)
    assert parse_duration("0h", allow_zero=True) == timedelta(0)
    with pytest.raises(PeriodError, match="greater than zero"):
        parse_duration("0h")
    with pytest.raises(PeriodError, match="not a valid duration"):
        parse_duration("0")


def test_a_duration_past_a_million_days_is_refused() -> None:
    with pytest.raises(PeriodError, match="longer than 1000000 days"):
        parse_duration("3000y")


@pytest.mark.parametrize(
    ("text", "moment"),
    [("2h", NOW - timedelta(hours=2)), ("30min", NOW - timedelta(minutes=30)), ("7d", NOW - timedelta(days=7)),
     ("2026-01-02", datetime(2026, 1, 2, tzinfo=UTC)),
     ("2026-01-02T03:04:05Z", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
     ("2026-01-02T03:04:05+02:00", datetime(2026, 1, 2, 1, 4, 5, tzinfo=UTC))],
)
def test_an_instant_is_iso_8601_or_a_duration_ago(text: str, moment: datetime) -> None:
    assert parse_instant(text, NOW) == moment


def test_an_instant_without_a_zone_is_utc() -> None:
    assert parse_instant("2026-01-02T03:04:05", NOW).tzinfo is UTC


@pytest.mark.parametrize(("text", "says"), [("yesterday", "neither an ISO 8601 time"), ("5m", "ambiguous")])
def test_an_instant_that_is_neither_is_refused_naming_both_forms(text: str, says: str) -> None:
    with pytest.raises(PeriodError, match=says):
        parse_instant(text, NOW)
