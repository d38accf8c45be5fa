"""Every matching audit row, oldest first, in bounded chunks: the export behind NDJSON, CSV and ``--follow``.

Rows are read by keyset (``id > last``, a primary-key range scan), a chunk at a time, so an
export of any size holds one chunk in memory and no cursor stays open between chunks (on
SQLite a long-open read would keep the write-ahead log from being checkpointed). Ids grow
with every insert, so "oldest first" is id order and a follower asks for ``id > last seen``.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from audit.forwarding import as_entry
from audit.models import AuditEntry
from audit.recorder import fit_name

CHUNK = 2000
CSV_COLUMNS = ("timestamp", "action", "resource", "user", "success", "details", "outcome", "project",
               "definition_project", "definition", "environment", "origin")


@dataclass(frozen=True)
class AuditFilter:
    """The filters of ``GET /audit/logs``; ``since`` is inclusive, ``until`` exclusive."""

    action: str | None = None
    resource: str | None = None
    success: bool | None = None
    user: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    secret: str | None = None
    project: str | None = None

    def queryset(self) -> QuerySet[AuditEntry]:
        rows = AuditEntry.objects.all()
        for name in ("action", "resource", "user", "project"):
            if getattr(self, name):
                rows = rows.filter(**{name: getattr(self, name)})
        if self.success is not None:
            rows = rows.filter(success__in=[self.success])
        if self.since is not None:
            rows = rows.filter(timestamp__gte=self.since)
        if self.until is not None:
            rows = rows.filter(timestamp__lt=self.until)
        if self.secret:
            # One mention per (row, secret): the join never repeats a row.
            rows = rows.filter(mentions__secret=fit_name(self.secret))
        return rows


def rows(where: AuditFilter, *, after_id: int = 0, offset: int = 0, limit: int | None = None,
         chunk: int = CHUNK) -> Iterator[AuditEntry]:
    """Matching rows with ids above ``after_id``, oldest first, skipping ``offset``, at most ``limit``."""
    matching = where.queryset().order_by("id")
    left = limit
    first = True
    while left is None or left > 0:
        size = chunk if left is None else min(chunk, left)
        page = matching.filter(id__gt=after_id)
        # The offset applies once, to the first chunk; later chunks continue from the last id.
        batch = list(page[offset : offset + size] if first else page[:size])
        first = False
        yield from batch
        if len(batch) < size:
            return
        after_id = batch[-1].id
        if left is not None:
            left -= len(batch)


def entry(row: AuditEntry) -> dict[str, Any]:
    """A row as ``GET /audit/logs`` shows an entry (UTC, ``Z``)."""
    return as_entry(vars(row))


def jsonl(rows: Iterable[AuditEntry]) -> Iterator[str]:
    """One JSON object per line (NDJSON), ASCII-escaped like the API's JSON."""
    for row in rows:
        yield json.dumps(entry(row), separators=(",", ":")) + "\n"


def json_array(rows: Iterable[AuditEntry]) -> Iterator[str]:
    """One JSON array, written an entry at a time."""
    opened = False
    for row in rows:
        yield ("[\n" if not opened else ",\n") + json.dumps(entry(row), separators=(",", ":"))
        opened = True
    yield "\n]\n" if opened else "[]\n"


def csv_lines(rows: Iterable[AuditEntry], *, header: bool = True) -> Iterator[str]:
    """CSV (RFC 4180) with ``CSV_COLUMNS``; ``details`` is its JSON text, ``success`` true/false."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def take() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    if header:
        writer.writerow(CSV_COLUMNS)
        yield take()
    for row in rows:
        line = entry(row)
        writer.writerow([line["timestamp"], line["action"], line["resource"], line["user"] or "",
                         "true" if line["success"] else "false",
                         json.dumps(line["details"], separators=(",", ":")),
                         *(line[name] or "" for name in CSV_COLUMNS[6:])])
        yield take()


def follow(where: AuditFilter, *, every: float, after_id: int = 0,
           sleep: Callable[[float], None] = time.sleep) -> Iterator[AuditEntry]:
    """Every matching row with an id above ``after_id``, then each new one as it is written, asking
    every ``every`` seconds.

    Never ends: its consumer stops it (Ctrl-C). A row committed with a lower id after a higher
    one was read (two writers racing on PostgreSQL) is missed; on SQLite writers are serial.
    """
    after = after_id
    while True:
        for row in rows(where, after_id=after):
            after = row.id
            yield row
        sleep(every)
