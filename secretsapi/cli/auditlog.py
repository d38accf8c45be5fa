"""``secretsctl audit``: a page of the audit log, newest first, or ``--follow``: the last rows,
oldest first, then each new one as it is written (until Ctrl-C), as ``tail -f`` does.

Rows have the shape of ``GET /audit/logs``' entries; with ``--follow`` the JSON is one entry per
line (JSON lines), since the output has no end.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from audit.export import AuditFilter, entry
from audit.models import AuditEntry
from secretsapi.actions import auditlog
from secretsapi.cli import auditrows
from secretsapi.cli.program import Lane
from secretsapi.management.base import cli_actor
from secretsapi.management.reports import Report


def page(lane: Lane, *, limit: int, offset: int, action: str | None, resource: str | None, secret: str | None,
         user: str | None, since: datetime | None, until: datetime | None) -> Report:
    entries = auditlog.read_audit_logs(actor=cli_actor(), limit=limit, offset=offset, action=action,
                                       resource=resource, secret=secret, user=user, since=since, until=until)
    return auditrows.page_report([entry(row) for row in entries])


def follow(lane: Lane, *, limit: int, action: str | None, resource: str | None, secret: str | None,
           user: str | None, since: datetime | None, until: datetime | None, interval: float) -> None:
    """The newest ``limit`` matching rows, oldest first, then every new matching row; never returns."""
    with auditrows.until_ctrl_c() as wait:
        _follow(wait, limit=limit, action=action, resource=resource, secret=secret, user=user, since=since,
                until=until, interval=interval, as_json=lane.output_format == "json")


def _follow(wait: Callable[[float], None], *, limit: int, action: str | None, resource: str | None,
            secret: str | None, user: str | None, since: datetime | None, until: datetime | None,
            interval: float, as_json: bool) -> None:
    last = auditlog.read_audit_logs(actor=cli_actor(), limit=limit, offset=0, action=action, resource=resource,
                                    secret=secret, user=user, since=since, until=until)
    if not as_json:
        auditrows.echo_header()
    after_id = 0
    for row in reversed(last):
        _print(row, as_json)
        after_id = max(after_id, row.id)
    where = AuditFilter(action=action, resource=resource, user=user, since=since, until=until, secret=secret)
    for row in auditlog.export_audit_logs(actor=cli_actor(), where=where, follow_every=interval, after_id=after_id,
                                          sleep=wait):
        _print(row, as_json)
        wait(0)  # a Ctrl-C while rows keep coming


def _print(row: AuditEntry, as_json: bool) -> None:
    auditrows.echo(entry(row), as_json)
