"""Random draws: exactly uniform (rejection, no modulo bias), from os.urandom, a block at a time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from secretsapi.service.generators import random_draws
from secretsapi.service.generators.random_draws import Draw, password


def _feed(monkeypatch: pytest.MonkeyPatch, data: bytes) -> list[int]:
    """os.urandom answers from ``data`` in order; returns the sizes asked for."""
    stream: Iterator[int] = iter(data)
    asked: list[int] = []

    def urandom(count: int) -> bytes:
        asked.append(count)
        return bytes(next(stream, 0) for _ in range(count))

    monkeypatch.setattr("os.urandom", urandom)
    return asked


def test_a_byte_past_the_last_whole_multiple_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    # n = 100: bytes 200..255 would make 0..55 more likely than 56..99, so they are skipped.
    _feed(monkeypatch, bytes([250, 200, 199] + [0] * 13))
    assert Draw(16).below(100) == 99


def test_choices_skip_biased_bytes_and_map_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    # Alphabet of 3: limit 255, so byte 255 is skipped.
    _feed(monkeypatch, bytes([255, 0, 4, 255, 8] + [0] * 11))
    assert Draw(16).choices("abc", 3) == ["a", "b", "c"]


def test_values_wider_than_a_byte_use_several_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    _feed(monkeypatch, bytes([0x01, 0x02] + [0] * 14))
    assert Draw(16).below(1000) == 0x0102


def test_a_password_asks_the_kernel_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Indexes 0, 26, 52, 62 of the union: A, a, 0, ! (every class in the first draw).
    asked = _feed(monkeypatch, bytes([0, 26, 52, 62]) * 64)
    value = password(24, ("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "0123456789", "!#"))
    assert len(value) == 24 and len(asked) == 1


def test_an_unlucky_draw_missing_a_class_is_drawn_again() -> None:
    for _ in range(200):
        value = password(4, ("AB", "ab", "01", "!#"))
        assert set(value) & set("AB") and set(value) & set("ab")
        assert set(value) & set("01") and set(value) & set("!#")


def test_option_sets_that_rarely_succeed_still_finish_with_every_class(monkeypatch: pytest.MonkeyPatch) -> None:
    # Never accept a uniform draw: the constructive path must still give every class.
    monkeypatch.setattr(random_draws, "_PASSWORD_TRIES", 0)
    for _ in range(50):
        value = password(3, ("A", "b", "0123456789"))
        assert len(value) == 3 and set("Ab") <= set(value) and set(value) & set("0123456789")


def test_draws_cover_every_character_evenly() -> None:
    # 90,000 draws of 9 symbols: each count is 10,000 give or take ~94 (one sigma); a bound of
    # 1,000 fails by chance with probability far below 1e-20, and catches a symbol left out.
    counts = Counter(Draw(1024).choices("abcdefghi", 90_000))
    assert set(counts) == set("abcdefghi")
    assert all(abs(count - 10_000) < 1_000 for count in counts.values())
