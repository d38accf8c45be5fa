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

from audit import origin
from audit.forwarding import as_entry, forward
from audit.mentions import mentioned_secrets
from audit.models import AuditEntry, AuditMention, outcome_of
from audit.write_gate import audit_write_gate

logger = logging.getLogger("audit.recorder")


def record(
    *,
    action: str,
    resource: str,
    user: str | None,
    success: bool,
    details: Mapping[str, Any] | None = None,
    outcome: str | None = None,
    context: Mapping[str, str | None] | None = None,
) -> int:
    """Write one row and return its id. Errors propagate: an operation must not succeed unrecorded.

    ``details`` must hold names, counts and hashes only, never secret values. The secrets the
    row is about (``audit.mentions``) are written with it, in one transaction. ``outcome``: a
    finding that is no failure (``drift``), else ``ok`` or ``failed`` from ``success``.
    ``context``: where it ran (``definition``, ``project``, ``environment``; see ``where``);
    the row's ``origin`` is the context's (``audit.origin``).
    On SQLite the write waits for the others in ``audit_write_gate`` (see bench/README.md for
    the figures).
    """
    if _unwritten:
        complete_unwritten()
    details = _storable(dict(details or {}))
    names = mentioned_secrets(resource, details)
    started = details.get("state") == STARTED
    fields = {"timestamp": timezone.now(), "action": action, "resource": fit(resource, RESOURCE_MAX),
              "user": None if user is None else fit(user, RESOURCE_MAX), "details": details,
              "success": bool(success),
              "outcome": STARTED if started else (outcome or outcome_of("", bool(success))),
              **where(context)}
    if not names:
        with audit_write_gate():
            row_id = int(AuditEntry.objects.create(**fields).pk)
    else:
        with audit_write_gate(), transaction.atomic():
            row = AuditEntry.objects.create(**fields)
            _mention(row.pk, row.timestamp, names)
        row_id = int(row.pk)
    # A row that ``finish`` will complete is forwarded then, with its outcome.
    if not started:
        _forward_on_commit(fields)
    return row_id


CONTEXT_FIELDS = ("definition", "project", "definition_project", "environment", "origin")


def where(context: Mapping[str, str | None] | None) -> dict[str, str]:
    """The row's context columns: ``context``'s definition, project and environment (each
    clipped to its column), and the origin of the call running now (``audit.origin``)."""
    given = context or {}
    return {
        "definition": fit(given.get("definition") or "", DEFINITION_MAX),
        "project": fit(given.get("project") or "", RESOURCE_MAX),
        "definition_project": fit(given.get("definition_project") or "", RESOURCE_MAX),
        "environment": fit(given.get("environment") or "", RESOURCE_MAX),
        "origin": fit(origin.current(), RESOURCE_MAX),
    }


def _forward_on_commit(row: Mapping[str, Any]) -> None:
    """Hand the row (its columns) to ``audit.forwarding`` once it is committed (at once outside
    a transaction); nothing at all when forwarding is off."""
    if settings.AUDIT_FORWARD is not None:
        entry = as_entry(row)
        transaction.on_commit(lambda: forward(entry))


def _mention(row_id: int, timestamp: datetime, names: list[str]) -> None:
    """The row's mentions; an existing one is left alone (``finish`` adds to ``begin``'s).

    One prepared INSERT run over every name (``executemany``): a sync of every secret mentions
    each one it generated, and ``bulk_create`` prepared each row's three values through the fields
    (the same timestamp 20,000 times), ~4 times the cost of the insert itself. Both databases
    the service runs on (SQLite, PostgreSQL) take the same upsert clause.
    """
    at = connection.ops.adapt_datetimefield_value(timestamp)
    with connection.cursor() as cursor:
        cursor.executemany(_mention_statement(), [(row_id, fit_name(name), at) for name in names])


def _mention_statement() -> str:
    quote = connection.ops.quote_name
    meta = AuditMention._meta
    columns = [quote(cast("Field[Any, Any]", meta.get_field(name)).column) for name in ("entry", "secret", "timestamp")]
    return (f"INSERT INTO {quote(meta.db_table)} ({', '.join(columns)}) "  # noqa: S608 - the model's own names
            f"VALUES (%s, %s, %s) ON CONFLICT ({columns[0]}, {columns[1]}) DO NOTHING")


def tally(*, key: str, at: datetime, action: str, resource: str, user: str | None,
          details: Mapping[str, Any], project: str | None = None) -> None:
    """Count one more attempt on the row ``key`` names, writing it (``details.count`` 1) if new.

    One statement (an upsert on the partial unique index of ``tally_key``), so attempts from
    every thread, worker and instance add up exactly: two writers of a new key cannot both
    insert, and the increment is the database's, never read-then-write. ``user`` and
    ``details`` are the first attempt's (at ``at``); later ones only raise the count.
    ``project``: the row's project; each project counts on a row of its own.
    """
    context = where({"project": project})
    params = [
        connection.ops.adapt_datetimefield_value(at),
        action,
        fit(resource, RESOURCE_MAX),
        None if user is None else fit(user, RESOURCE_MAX),
        connection.ops.adapt_json_value({**_storable(dict(details)), "count": 1}, _DETAILS_ENCODER),
        False,
        "failed",
        *(context[name] for name in CONTEXT_FIELDS),
        fit(f"{key}|{project}" if project else key, TALLY_KEY_MAX),
    ]
    with audit_write_gate(), connection.cursor() as cursor:
        cursor.execute(_tally_statement(connection.vendor), params)
    # Each attempt is an event for the sink; the database counts them in the one row.
    _forward_on_commit({"timestamp": at, "action": action, "resource": params[2], "user": params[3],
                        "details": _storable(dict(details)), "success": False, "outcome": "failed", **context})


class RowVanished(RuntimeError):
    """The row ``finish`` was to complete is gone."""


def begin(*, action: str, resource: str, user: str | None, details: Mapping[str, Any] | None = None,
          context: Mapping[str, str | None] | None = None) -> int:
    """Write the row of an operation that is about to change something, before it does.

    The row says ``success: false`` and ``details.state: "started"`` until ``finish`` completes
    it, so a process that dies mid-operation leaves a row saying the operation began and never
    reported back, instead of leaving changed files with no row at all. Returns the row's id.
    """
    return record(action=action, resource=resource, user=user, success=False,
                  details={**(details or {}), "state": STARTED}, context=context)


def mention_ahead(row_id: int, resource: str, details: Mapping[str, Any]) -> None:
    """Write the mentions of the outcome ``finish`` will complete row ``row_id`` with, before it,
    ``MENTION_CHUNK`` names to a transaction; call ``finish`` with ``mentioned=True`` then.

    A sync of 20,000 secrets mentions each one: in one transaction, with the outcome, that held
    SQLite's one writer for ~0.3-0.5 s, and every other project's audited request (a status
    writes its row) waited behind it. In chunks, another writer waits for one chunk at most. A
    process that dies between chunks leaves a ``started`` row with some of its mentions: every
    one names a secret the operation was about. On PostgreSQL, where writers do not wait for
    each other, this is one insert, as before.
    """
    names = mentioned_secrets(resource, _storable(dict(details)))
    if not names:
        return
    at = AuditEntry.objects.filter(pk=row_id).values_list("timestamp", flat=True).first()
    if at is None:
        return  # gone: ``finish`` says so
    chunk = MENTION_CHUNK if connection.vendor == "sqlite" and not connection.in_atomic_block else len(names)
    for start in range(0, len(names), chunk):
        with audit_write_gate(), transaction.atomic():
            _mention(row_id, at, names[start:start + chunk])


def finish(row_id: int, *, success: bool, details: Mapping[str, Any] | None = None,
           outcome: str | None = None, mentioned: bool = False) -> None:
    """Complete a row from ``begin`` with the outcome; errors propagate like ``record``'s.
    ``mentioned``: ``mention_ahead`` has written the outcome's mentions.

    When the database cannot be reached (stopped mid-operation), the outcome is kept and written
    by this process's next audit write or health check once the database answers again, with
    ``details.completed_late`` saying why: the row does not stay ``started`` while the process
    lives. Only a process that dies before then leaves it ``started``.
    """
    outcome = outcome or outcome_of("", success)
    try:
        _complete(row_id, success, _storable(dict(details or {})), outcome, mentioned=mentioned)
    except (OperationalError, InterfaceError):
        keep_unwritten(row_id, success=success, details=details, outcome=outcome)
        raise


def keep_unwritten(row_id: int, *, success: bool, details: Mapping[str, Any] | None = None,
                   outcome: str | None = None) -> None:
    """Keep the outcome of a row the database could not take (see ``finish``), to write it later."""
    with _unwritten_lock:
        _unwritten[row_id] = (success, {**_storable(dict(details or {})), "completed_late": COMPLETED_LATE},
                              outcome or outcome_of("", success))


def complete_kept(row_id: int) -> bool:
    """Write the outcome ``finish`` kept for ``row_id`` in this process, if it kept one (with its
    ``details.completed_late``); whether it did. It stays kept until the write commits (in the
    caller's transaction, if any); database errors propagate."""
    with _unwritten_lock:
        kept = _unwritten.get(row_id)
    if kept is None:
        return False
    _complete(row_id, *kept)

    def forget() -> None:
        with _unwritten_lock:
            _unwritten.pop(row_id, None)

    transaction.on_commit(forget)
    return True


def has_unwritten() -> bool:
    return bool(_unwritten)


def complete_unwritten() -> None:
    """Write the outcomes ``finish`` could not (oldest first); database errors propagate."""
    with _unwritten_lock:
        pending = sorted(_unwritten.items())
    for row_id, (success, details, outcome) in pending:
        try:
            _complete(row_id, success, details, outcome)
        except RowVanished:  # the database came back without it (restored from a backup)
            logger.warning("audit row %s vanished before its outcome could be written", row_id)
        with _unwritten_lock:
            _unwritten.pop(row_id, None)


def _complete(row_id: int, success: bool, details: dict[str, Any], outcome: str, *, mentioned: bool = False) -> None:
    with audit_write_gate(), transaction.atomic():
        updated = AuditEntry.objects.filter(pk=row_id).update(success=success, details=details, outcome=outcome)
        if updated != 1:
            raise RowVanished(f"audit row {row_id} disappeared before it was completed")
        # The outcome names more secrets than the start did (a sync's lists): add them.
        row = AuditEntry.objects.filter(pk=row_id).values(*FORWARDED).get()
        names = [] if mentioned else mentioned_secrets(row["resource"], details)
        if names:
            _mention(row_id, row["timestamp"], names)
        _forward_on_commit(row)


_TABLE = AuditEntry._meta.db_table
_DETAILS_ENCODER = AuditEntry._meta.get_field("details").encoder
# The order of tally()'s parameters.
_FIELDS = [
    cast("Field[Any, Any]", AuditEntry._meta.get_field(name))
    for name in ("timestamp", "action", "resource", "user", "details", "success", "outcome", *CONTEXT_FIELDS)
]
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


STARTED = "started"
TALLY_KEY_MAX = cast("Field[Any, Any]", AuditEntry._meta.get_field("tally_key")).max_length or 160
# Mentions written to one SQLite transaction by ``mention_ahead``: another writer waits at most one
# chunk (250: p99 15 ms against 26 ms at 1,000, the whole outcome as long; bench/README.md).
MENTION_CHUNK = 250
COMPLETED_LATE = "the database was unreachable when the operation ended"
# Outcomes of this process's operations that ``finish`` could not write: row id -> (success, details, outcome).
_unwritten: dict[int, tuple[bool, dict[str, Any], str]] = {}
_unwritten_lock = threading.Lock()
RESOURCE_MAX = AuditEntry._meta.get_field("resource").max_length or 255
DEFINITION_MAX = AuditEntry._meta.get_field("definition").max_length or 1024
# The columns a forwarded line carries (``audit.forwarding.as_entry``).
FORWARDED = ("timestamp", "action", "resource", "user", "details", "success", "outcome", *CONTEXT_FIELDS)
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
