"""How ``secretsctl audit`` prints entries of the shape of ``GET /audit/logs``: a page as a table,
a follower's rows one line at a time. Django-free: the local mode and ``--addr`` share it."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

import click

from secretsapi.management.reports import Report, table_report

HEADER = ("TIME", "USER", "ACTION", "RESOURCE", "PROJECT", "DEFINITION", "ENVIRONMENT", "ORIGIN", "OUTCOME")


def cells(row: dict[str, Any]) -> tuple[str, ...]:
    # PROJECT is the service's project the row ran in; DEFINITION the definition's metadata.project,
    # else its file name: four local definitions' syncs, all in project ``default``, must not read
    # alike, and a definition's own name must not pass for the service project a key is confined to.
    definition = row.get("definition_project") or (row.get("definition") or "").rsplit("/", 1)[-1] or "-"
    return (row["timestamp"], row["user"] or "-", row["action"], row["resource"], row.get("project") or "-",
            definition, row["environment"] or "-", row["origin"] or "-", row["outcome"])


def page_report(rows: list[dict[str, Any]]) -> Report:
    report = table_report("entries", rows, HEADER, cells)
    # The shape of GET /audit/logs' entries.
    report.data = {"entries": rows, "count": len(rows)}
    return report


def echo(row: dict[str, Any], as_json: bool) -> None:
    # Flushed a row at a time: a reader at the other end of a pipe sees each row at once.
    click.echo(json.dumps(row, separators=(",", ":")) if as_json else line(cells(row)))


def line(row_cells: tuple[str, ...]) -> str:
    # Fixed widths: the rows of a follower arrive one by one, so no column can be measured first.
    widths = (27, 20, 22, 28, 16, 20, 12, 32)
    return "  ".join([*(cell.ljust(width) for cell, width in zip(row_cells, widths, strict=False)), row_cells[-1]])


def echo_header() -> None:
    click.echo(line(HEADER))


@contextlib.contextmanager
def until_ctrl_c() -> Iterator[Callable[[float], None]]:
    """A follower's wait between looks: Ctrl-C is noted by its own handler and raised as
    KeyboardInterrupt here, in the follower's frame. Raised by Python's default handler wherever
    the signal fell, it could fall in a finalizer (``__del__``, a generator's close during a
    collection), which prints "Exception ignored" and goes on: the follower then never stopped."""
    pressed = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.set())

    def wait(seconds: float) -> None:
        if pressed.wait(seconds):
            raise KeyboardInterrupt

    try:
        yield wait
    finally:
        signal.signal(signal.SIGINT, previous)
