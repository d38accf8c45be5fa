"""``record()``: the only writer of audit rows."""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import Field
from django.utils import timezone

from audit.forwarding import as_entry, forward
from audit.mentions import mentioned_secrets
from audit.models import AuditEntry, AuditMention
from audit.write_gate import audit_write_gate

logger = logging.getLogger("audit.recorder")


def record(
    *,
    action: str,
    resource: str,
    user: str | None,
    success: bool,
    details: Mapping[str, Any] | None = None,
) -> int:
    """Write one row and return its id. Errors propagate: an operation must not succeed unrecorded.

    ``details`` must hold names, counts and hashes only, never secret values. The INSERT is
    built once per database vendor: compiling it again on every request was ~40% of a write.
    The secrets the row is about (``audit.mentions``) are written with it, in one transaction.
    """
    if _unwritten:
        complete_unwritten()
    ops = connection.ops
    now = timezone.now()
    details = _storable(dict(details or {}))
    names = mentioned_secrets(resource, details)
    # The backend's own adapters, the ones the model fields end in (dates, JSON), so the row is
    # the one ``save()`` writes; building a model instance per row was a fifth of the write.
    params = [
        ops.adapt_datetimefield_value(now),
        action,
        fit(resource, RESOURCE_MAX),
        None if user is None else fit(user, RESOURCE_MAX),
        ops.adapt_json_value(details, _DETAILS_ENCODER),
        bool(success),
    ]
    sql, returning = _statement(connection.vendor)
    if names:
        with audit_write_gate(), transaction.atomic():
            row_id = _insert(sql, params, returning)
            _mention(row_id, now, names)
    else:
        # Only the statement runs inside the gate: every writer of every worker queues on it.
        with audit_write_gate():
            row_id = _insert(sql, params, returning)
    # A row that ``finish`` will complete is forwarded then, with its outcome.
    if details.get("state") != STARTED:
        _forward_on_commit(now, action, params[2], params[3], details, bool(success))
    return row_id


def _forward_on_commit(*fields: Any) -> None:
    """Hand the row (``as_entry``'s fields) to ``audit.forwarding`` once it is committed (at once
    outside a transaction); nothing at all when forwarding is off."""
    if settings.AUDIT_FORWARD is not None:
        entry = as_entry(*fields)
        transaction.on_commit(lambda: forward(entry))


def _insert(sql: str, params: list[Any], returning: bool) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if returning:
            return int(cursor.fetchone()[0])
        return int(connection.ops.last_insert_id(cursor, _TABLE, _PK_COLUMN))


def _mention(row_id: int, timestamp: Any, names: list[str]) -> None:
    """The row's mentions; an existing one is left alone (``finish`` adds to ``begin``'s)."""
    stamp = connection.ops.adapt_datetimefield_value(timestamp)
    with connection.cursor() as cursor:
        cursor.executemany(_mention_statement(connection.vendor),
                           [(row_id, fit_name(name), stamp) for name in names])


def tally(*, key: str, at: datetime, action: str, resource: str, user: str | None,
          details: Mapping[str, Any]) -> None:
    """Count one more attempt on the row ``key`` names, writing it (``details.count`` 1) if new.

    One statement (an upsert on the partial unique index of ``tally_key``), so attempts from
    every thread, worker and instance add up exactly: two writers of a new key cannot both
    insert, and the increment is the database's, never read-then-write. ``user`` and
    ``details`` are the first attempt's (at ``at``); later ones only raise the count.
    """
    params = [
        connection.ops.adapt_datetimefield_value(at),
        action,
        fit(resource, RESOURCE_MAX),
        None if user is None else fit(user, RESOURCE_MAX),
        connection.ops.adapt_json_value({**_storable(dict(details)), "count": 1}, _DETAILS_ENCODER),
        False,
        key,
    ]
    with audit_write_gate(), connection.cursor() as cursor:
        cursor.execute(_tally_statement(connection.vendor), params)
    # Each attempt is an event for the sink; the database counts them in the one row.
    _forward_on_commit(at, action, params[2], params[3], _storable(dict(details)), False)


class RowVanished(RuntimeError):
    """The row ``finish`` was to complete is gone."""


def begin(*, action: str, resource: str, user: str | None, details: Mapping[str, Any] | None = None) -> int:
    """Write the row of an operation that is about to change something, before it does.

    The row says ``success: false`` and ``details.state: "started"`` until ``finish`` completes
    it, so a process that dies mid-operation leaves a row saying the operation began and never
    reported back, instead of leaving changed files with no row at all. Returns the row's id.
    """
    return record(action=action, resource=resource, user=user, success=False,
                  details={**(details or {}), "state": STARTED})


def finish(row_id: int, *, success: bool, details: Mapping[str, Any] | None = None) -> None:
    """Complete a row from ``begin`` with the outcome; errors propagate like ``record``'s.

    When the database cannot be reached (stopped mid-operation), the outcome is kept and written
    by this process's next audit write or health check once the database answers again, with
    ``details.completed_late`` saying why: the row does not stay ``started`` while the process
    lives. Only a process that dies before then leaves it ``started``.
    """
    outcome: dict[str, Any] = _storable(dict(details or {}))
    try:
        _complete(row_id, success, outcome)
    except (OperationalError, InterfaceError):
        with _unwritten_lock:
            _unwritten[row_id] = (success, {**outcome, "completed_late": COMPLETED_LATE})
        raise


def complete_unwritten() -> None:
    """Write the outcomes ``finish`` could not (oldest first); database errors propagate."""
    with _unwritten_lock:
        pending = sorted(_unwritten.items())
    for row_id, (success, details) in pending:
        try:
            _complete(row_id, success, details)
        except RowVanished:  # the database came back without it (restored from a backup)
            logger.warning("audit row %s vanished before its outcome could be written", row_id)
        with _unwritten_lock:
            _unwritten.pop(row_id, None)


def _complete(row_id: int, success: bool, details: dict[str, Any]) -> None:
    with audit_write_gate(), transaction.atomic():
        updated = AuditEntry.objects.filter(pk=row_id).update(success=success, details=details)
        if updated != 1:
            raise RowVanished(f"audit row {row_id} disappeared before it was completed")
        # The outcome names more secrets than the start did (a sync's lists): add them.
        timestamp, action, resource, user = (AuditEntry.objects.filter(pk=row_id)
                                             .values_list("timestamp", "action", "resource", "user").get())
        names = mentioned_secrets(resource, details)
        if names:
            _mention(row_id, timestamp, names)
        _forward_on_commit(timestamp, action, resource, user, details, success)


_TABLE, _PK_COLUMN = AuditEntry._meta.db_table, AuditEntry._meta.pk.column
_DETAILS_ENCODER = AuditEntry._meta.get_field("details").encoder
# The order of record()'s parameters.
_FIELDS = [
    cast("Field[Any, Any]", AuditEntry._meta.get_field(name))
    for name in ("timestamp", "action", "resource", "user", "details", "success")
]
_statements: dict[str, tuple[str, bool]] = {}


def _statement(vendor: str) -> tuple[str, bool]:
    if vendor not in _statements:
        quote = connection.ops.quote_name
        # SQLite's driver reports the new id for free (lastrowid); PostgreSQL's needs RETURNING.
        returning = vendor != "sqlite" and bool(connection.features.can_return_columns_from_insert)
        # Only the model's own table and column names are formatted in; values are parameters.
        sql = (f"INSERT INTO {quote(_TABLE)} ({', '.join(quote(f.column) for f in _FIELDS)}) "  # noqa: S608
               f"VALUES ({', '.join(['%s'] * len(_FIELDS))})")
        if returning:
            sql += f" RETURNING {quote(_PK_COLUMN)}"
        _statements[vendor] = (sql, returning)
    return _statements[vendor]


_tally_statements: dict[str, str] = {}
# ``details.count`` + 1, in each vendor's JSON functions (PostgreSQL's column is jsonb).
_INCREMENT = {
    "sqlite": "json_set({d}, '$.count', json_extract({d}, '$.count') + 1)",
    "postgresql": "jsonb_set({d}, '{{count}}', to_jsonb(({d} ->> 'count')::bigint + 1))",
}


def _tally_statement(vendor: str) -> str:
    if vendor not in _tally_statements:
        quote = connection.ops.quote_name
        key = quote(cast("Field[Any, Any]", AuditEntry._meta.get_field("tally_key")).column)
        details = f"{quote(_TABLE)}.{quote(_FIELDS[4].column)}"
        columns = [*(quote(f.column) for f in _FIELDS), key]
        # The conflict target repeats the partial index's predicate, as both databases require.
        _tally_statements[vendor] = (
            f"INSERT INTO {quote(_TABLE)} ({', '.join(columns)}) "  # noqa: S608 - the model's own names
            f"VALUES ({', '.join(['%s'] * len(columns))}) "
            f"ON CONFLICT ({key}) WHERE {key} IS NOT NULL "
            f"DO UPDATE SET {quote(_FIELDS[4].column)} = {_INCREMENT[vendor].format(d=details)}"
        )
    return _tally_statements[vendor]


_mention_statements: dict[str, str] = {}


def _mention_statement(vendor: str) -> str:
    if vendor not in _mention_statements:
        quote = connection.ops.quote_name
        entry, secret, stamp = (cast("Field[Any, Any]", AuditMention._meta.get_field(f)).column
                                for f in ("entry", "secret", "timestamp"))
        # Both SQLite (3.24+) and PostgreSQL read this upsert clause; the pair is unique.
        _mention_statements[vendor] = (
            f"INSERT INTO {quote(AuditMention._meta.db_table)} "  # noqa: S608 - the model's own names
            f"({quote(entry)}, {quote(secret)}, {quote(stamp)}) VALUES (%s, %s, %s) "
            f"ON CONFLICT ({quote(entry)}, {quote(secret)}) DO NOTHING"
        )
    return _mention_statements[vendor]


STARTED = "started"
COMPLETED_LATE = "the database was unreachable when the operation ended"
# Outcomes of this process's operations that ``finish`` could not write: row id -> (success, details).
_unwritten: dict[int, tuple[bool, dict[str, Any]]] = {}
_unwritten_lock = threading.Lock()
RESOURCE_MAX = AuditEntry._meta.get_field("resource").max_length or 255
# Characters PostgreSQL's jsonb and text cannot hold: NUL and lone surrogates.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def fit(text: str, limit: int) -> str:
    """Clip overlong names (request input can be long) with a hash, so distinct ones stay distinct."""
    text = _UNSTORABLE.sub("\ufffd", text)
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{text[: limit - 13]}~{digest}"


def fit_name(name: str) -> str:
    """A secret name as the mentions store it (clipped like a resource): what ``?secret=`` looks up."""
    return fit(name, RESOURCE_MAX)


def _storable(value: Any) -> Any:
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {_storable(str(k)): _storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_storable(v) for v in value]
    return value
