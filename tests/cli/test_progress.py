"""The progress bar: on a terminal for work over a second, never with --quiet, never piped.

The clock is the module's, replaced by a counter (no real waiting); the terminal is Rich's
``TTY_COMPATIBLE=1``, which makes stderr count as one.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from secretsapi.cli import progress


def clock(*readings: float) -> Iterator[float]:
    yield from readings
    while True:
        yield readings[-1]


def walk(total: int, *, quiet: bool = False) -> None:
    with progress.steps(total, "sync", quiet=quiet) as advance:
        for _ in range(total):
            advance()


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")


def test_work_over_a_second_on_a_terminal_shows_a_bar(terminal: None, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "clock", clock(0.0, 0.4, 1.5).__next__)
    walk(3)
    assert "sync" in capsys.readouterr().err


def test_work_under_a_second_shows_none(terminal: None, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "clock", clock(0.0, 0.2, 0.4, 0.6).__next__)
    walk(3)
    assert capsys.readouterr().err == ""


def test_quiet_shows_none(terminal: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "clock", clock(0.0, 5.0).__next__)
    walk(3, quiet=True)
    assert capsys.readouterr().err == ""


def test_piped_output_shows_none(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setattr(progress, "clock", clock(0.0, 5.0).__next__)
    walk(3)
    assert capsys.readouterr().err == ""
