"""``secretsctl audit``: a page of the audit log, newest first, or ``--follow``: the last rows,
oldest first, then each new one as it is written (until Ctrl-C), as ``tail -f`` does.

Rows have the shape of ``GET /audit/logs``' entries; with ``--follow`` the JSON is one entry per
line (JSON lines), since the output has no end.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click

from audit.export import AuditFilter, entry
from audit.models import AuditEntry
from secretsapi import actions
from secretsapi.cli.program import Lane
from secretsapi.management.base import cli_actor
from secretsapi.management.reports import Report, table_report

HEADER = ("TIME", "USER", "ACTION", "RESOURCE", "PROJECT", "ENVIRONMENT", "ORIGIN", "OUTCOME")


def _cells(row: dict[str, Any]) -> tuple[str, ...]:
    # The definition's metadata.project, else its file name: four local definitions' syncs must not
    # read alike (the service's project, ``project``, is ``default`` for every one of them).
    project = row["definition_project"] or (row["definition"] or "").rsplit("/", 1)[-1] or row["project"] or "-"
    return (row["timestamp"], row["user"] or "-", row["action"], row["resource"], project,
            row["environment"] or "-", row["origin"] or "-", row["outcome"])


def page(lane: Lane, *, limit: int, offset: int, action: str | None, resource: str | None, secret: str | None,
         user: str | None, since: datetime | None, until: datetime | None) -> Report:
    entries = actions.read_audit_logs(actor=cli_actor(), limit=limit, offset=offset, action=action,
                                      resource=resource, secret=secret, user=user, since=since, until=until)
    rows = [entry(row) for row in entries]
    report = table_report("entries", rows, HEADER, _cells)
    # The shape of GET /audit/logs' entries.
    report.data = {"entries": rows, "count": len(rows)}
    return report


def follow(lane: Lane, *, limit: int, action: str | None, resource: str | None, secret: str | None,
           user: str | None, since: datetime | None, until: datetime | None, interval: float) -> None:
    """The newest ``limit`` matching rows, oldest first, then every new matching row; never returns."""
    as_json = lane.output_format == "json"
    last = actions.read_audit_logs(actor=cli_actor(), limit=limit, offset=0, action=action, resource=resource,
                                   secret=secret, user=user, since=since, until=until)
    if not as_json:
        click.echo(_line(HEADER))
    after_id = 0
    for row in reversed(last):
        _print(row, as_json)
        after_id = max(after_id, row.id)
    where = AuditFilter(action=action, resource=resource, user=user, since=since, until=until, secret=secret)
    for row in actions.export_audit_logs(actor=cli_actor(), where=where, follow_every=interval, after_id=after_id):
        _print(row, as_json)


def _print(row: AuditEntry, as_json: bool) -> None:
    shown = entry(row)
    # Flushed a row at a time: a reader at the other end of a pipe sees each row at once.
    click.echo(json.dumps(shown, separators=(",", ":")) if as_json else _line(_cells(shown)))


def _line(cells: tuple[str, ...]) -> str:
    # Fixed widths: the rows of a follower arrive one by one, so no column can be measured first.
    widths = (27, 20, 22, 28, 20, 12, 32)
    return "  ".join([*(cell.ljust(width) for cell, width in zip(cells, widths, strict=False)), cells[-1]])
