"""Rotation periods: <N>d|w|m|y to days."""

from __future__ import annotations

import pytest

from secretsapi.service.definition.periods import parse_period


@pytest.mark.parametrize(
    ("text", "days"),
    [("1d", 1), ("90d", 90), ("2w", 14), ("3m", 90), ("1y", 365), ("1Y", 365), ("6M", 180)],
)
def test_valid_periods_convert_to_days(text: str, days: int) -> None:
    assert parse_period(text) == days


@pytest.mark.parametrize("text", ["90x", "0d", "-1d", "d", "90", "1.5d", "", "9 0d", "1000000000d"])
def test_invalid_periods_raise_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="is not a valid period"):
        parse_period(text)


@pytest.mark.parametrize("value", [90, None, ["90d"]])
def test_non_strings_are_not_periods(value: object) -> None:
    with pytest.raises(ValueError, match="is not a valid period"):
        parse_period(value)
