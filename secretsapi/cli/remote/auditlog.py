"""``secretsctl --addr URL audit``: ``GET /audit/logs`` with the same filters, printed as the local
mode prints its rows; ``--follow`` asks for the newest rows every ``--interval`` seconds."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from secretsapi.cli import auditrows
from secretsapi.cli.program import Lane
from secretsapi.cli.remote.client import Client
from secretsapi.management.reports import Report

# The most rows one look asks for: the API's page bound.
PAGE = 1000


def query(*, limit: int, offset: int, action: str | None, resource: str | None, secret: str | None,
          user: str | None, since: datetime | None, until: datetime | None) -> dict[str, Any]:
    given = {"limit": limit, "offset": offset, "action": action, "resource": resource, "secret": secret,
             "user": user, "since": _instant(since), "until": _instant(until)}
    return {name: value for name, value in given.items() if value is not None}


def _instant(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def page(api: Client, lane: Lane, *, limit: int, offset: int, **filters: Any) -> Report:
    entries = api.get("/audit/logs", query(limit=limit, offset=offset, **filters))["entries"]
    return auditrows.page_report(list(entries))


def follow(api: Client, lane: Lane, *, limit: int, interval: float, **filters: Any) -> None:
    """The newest ``limit`` matching rows, oldest first, then every new one; never returns.

    Entries carry no id: a row is new when it is later than the last one shown, or as late and
    not shown yet (rows of one instant are remembered until a later one arrives)."""
    as_json = lane.output_format == "json"
    if not as_json:
        auditrows.echo_header()
    last, shown = datetime.min.replace(tzinfo=UTC), set[str]()
    with auditrows.until_ctrl_c() as wait:
        for rows in _looks(api, limit, interval, filters, wait):
            last, shown = _show(rows, last, shown, as_json)


def _show(rows: list[dict[str, Any]], last: datetime, shown: set[str], as_json: bool) -> tuple[datetime, set[str]]:
    """The rows not shown yet, printed; the latest instant shown and the rows of that instant."""
    for row in reversed(rows):
        key, at = json.dumps(row, sort_keys=True), datetime.fromisoformat(row["timestamp"])
        if at < last or (at == last and key in shown):
            continue
        if at > last:
            last, shown = at, set()
        shown.add(key)
        auditrows.echo(row, as_json)
    return last, shown


def _looks(api: Client, limit: int, interval: float, filters: dict[str, Any],
           wait: Callable[[float], None]) -> Iterator[list[dict[str, Any]]]:
    yield list(api.get("/audit/logs", query(limit=limit, offset=0, **filters))["entries"])
    while True:
        wait(interval)  # a Ctrl-C ends it at once, however long the interval
        yield list(api.get("/audit/logs", query(limit=PAGE, offset=0, **filters))["entries"])
