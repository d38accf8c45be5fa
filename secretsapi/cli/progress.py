"""A Rich progress bar on stderr for work that takes over a second, on a terminal only.

Piped or redirected output (CI logs, ``--format json | jq``) and ``--quiet`` get none; a step
list shorter than a second never shows one (the bar starts once a second has passed).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# Work shorter than this shows no bar: it would only flicker.
SHOW_AFTER_SECONDS = 1.0
clock = time.monotonic


@contextmanager
def reporting(label: str, *, quiet: bool) -> Iterator[Callable[[int, int], None]]:
    """Yields the engine's progress callable, ``report(done, total)``, drawing the bar."""
    # Rich is imported by the subcommands that report progress, when they run: not by every
    # subcommand's start (validate, list, show...).
    from rich.console import Console

    console = Console(stderr=True)
    if quiet or not console.is_terminal:
        yield lambda done, total: None
        return
    # Only on a terminal: piped output (scripts, CI logs) never draws a bar.
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=console, transient=True)
    task = bar.add_task(label, total=None)
    begun = clock()
    shown = False

    def report(done: int, total: int) -> None:
        nonlocal shown
        bar.update(task, completed=done, total=total)
        if not shown and total > 1 and clock() - begun >= SHOW_AFTER_SECONDS:
            bar.start()
            shown = True

    try:
        yield report
    finally:
        if shown:
            bar.stop()


@contextmanager
def steps(total: int, label: str, *, quiet: bool) -> Iterator[Callable[[], None]]:
    """Yields ``advance``, to call after each of ``total`` steps (the interface's own loops)."""
    done = 0
    with reporting(label, quiet=quiet) as report:
        def advance() -> None:
            nonlocal done
            done += 1
            report(done, total)

        yield advance
