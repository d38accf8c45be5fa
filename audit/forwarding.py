"""Live forwarding of every new audit row to a syslog server (RFC 5424) or a JSON-lines file.

``SERVICE_AUDIT_FORWARD`` names the sink. The recorder hands each row to ``forward()`` once it
is committed; ``forward()`` only puts it on a bounded in-memory queue and returns, so an
operation never waits for the sink. One thread per process sends the queue's rows in order.

The database stays the record: a sink that is down, slow or refusing costs forwarded rows, never
an operation or a row. Nothing is lost silently: every failure to send, and every row dropped
because the queue is full, is logged (logger ``audit.forwarding``, a warning naming the sink,
how many rows and the first one's time), so ``manage.py audit --since <that time>`` can
send them again. Rows carry names, counts and hashes, never values; so do the forwarded lines.
"""

from __future__ import annotations

import atexit
import json
import logging
import logging.handlers
import os
import queue
import socket
import stat
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from django.conf import settings

logger = logging.getLogger("audit.forwarding")

QUEUE_ROWS = 10_000
# How long a process that ends waits for its queued rows to be sent.
DRAIN_S = 5.0
APP_NAME = "secretsapi"
# RFC 5424 header fields are printable US-ASCII without spaces, each with a maximum length.
_PRINTABLE = frozenset(chr(c) for c in range(33, 127))


@dataclass(frozen=True)
class Sink:
    """Where rows go: ``kind`` syslog (``transport`` udp or tcp, ``host``, ``port``) or file (``path``)."""

    kind: str
    transport: str = ""
    host: str = ""
    port: int = 0
    path: str = ""

    def __str__(self) -> str:
        if self.kind == "file":
            return f"file://{self.path}"
        return f"syslog+{self.transport}://{self.host}:{self.port}"


def as_entry(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row (its columns by name) as ``GET /audit/logs`` shows an entry: UTC, ``Z``; the
    outcome (``ok``, ``failed``, ``drift``...) and, when known, where it ran and came from."""
    stamp = row["timestamp"].astimezone(UTC).isoformat()
    entry = {"timestamp": stamp.removesuffix("+00:00") + "Z" if stamp.endswith("+00:00") else stamp,
             "action": row["action"], "resource": row["resource"], "user": row["user"], "details": row["details"],
             "success": row["success"], "outcome": row.get("outcome") or ("ok" if row["success"] else "failed")}
    entry.update((name, row.get(name) or None) for name in CONTEXT)
    return entry


# The entry's context fields, null when unknown (a row older than them, or one no definition concerns).
CONTEXT = ("project", "definition_project", "definition", "environment", "origin")
# Outcomes that are no failure but call for attention: forwarded at warning severity.
WARNINGS = frozenset({"drift"})


def severity(entry: Mapping[str, Any]) -> int:
    """``logging.INFO`` for a success, ``WARNING`` for a failure or a finding (drift)."""
    return logging.INFO if entry["success"] and entry.get("outcome") not in WARNINGS else logging.WARNING


def forward(entry: dict[str, Any]) -> None:
    """Queue one committed row (as ``audit.export.entry`` shapes it) for the sink; never blocks."""
    sink: Sink | None = settings.AUDIT_FORWARD
    if sink is None:
        return
    _forwarder(sink).put(entry)


class Forwarder:
    """One sink's queue and its sending thread, in this process."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.rows: queue.Queue[dict[str, Any]] = queue.Queue(QUEUE_ROWS)
        self.pid = os.getpid()
        self._dropped = 0
        self._dropped_since: str | None = None
        self._lock = threading.Lock()
        self._writer = FileWriter(sink.path) if sink.kind == "file" else SyslogWriter(sink)
        threading.Thread(target=self._run, name=f"audit-forward {sink}", daemon=True).start()
        # A command (manage.py sync) exits right after its row: what is queued goes out first.
        atexit.register(self.drain)

    def drain(self, seconds: float = DRAIN_S) -> None:
        """Wait, at most ``seconds``, until every queued row is sent (or has failed, logged)."""
        end = time.monotonic() + seconds
        while self.rows.unfinished_tasks and time.monotonic() < end:
            time.sleep(0.02)
        if self.rows.unfinished_tasks:
            logger.warning("audit forwarding to %s: %d rows were not forwarded before the process ended "
                           "(they are in the audit log)", self.sink, self.rows.unfinished_tasks)

    def put(self, entry: dict[str, Any]) -> None:
        try:
            self.rows.put_nowait(entry)
        except queue.Full:
            with self._lock:
                self._dropped += 1
                self._dropped_since = self._dropped_since or entry["timestamp"]
                first = self._dropped == 1
            if first:  # one warning per overflow: the count follows when the queue drains
                logger.warning("audit forwarding to %s is behind: the queue of %d rows is full; rows from %s on "
                               "are not forwarded (they are in the audit log)", self.sink, QUEUE_ROWS,
                               entry["timestamp"])

    def _run(self) -> None:
        failing_since: str | None = None
        failed = 0
        while True:
            entry = self.rows.get()
            with self._lock:
                dropped, since = self._dropped, self._dropped_since
                self._dropped, self._dropped_since = 0, None
            if dropped:
                logger.warning("audit forwarding to %s dropped %d rows from %s on (queue full); "
                               "`manage.py audit --since %s` exports them", self.sink, dropped, since, since)
            try:
                self._writer.write(entry)
            except Exception as exc:  # whatever the sink does, the thread must go on and say so
                failed += 1
                if failing_since is None:
                    failing_since = entry["timestamp"]
                    logger.warning("audit forwarding to %s failed (%s); rows from %s on are not forwarded until "
                                   "it answers again (they are in the audit log)", self.sink,
                                   getattr(exc, "strerror", None) or type(exc).__name__, failing_since)
                continue
            finally:
                self.rows.task_done()
            if failing_since is not None:
                logger.warning("audit forwarding to %s works again; %d rows from %s on were not forwarded: "
                               "`manage.py audit --since %s` exports them", self.sink, failed, failing_since,
                               failing_since)
                failing_since, failed = None, 0


class FileWriter:
    """Appends one JSON object per line to a file it creates 0600, never through a symlink.

    Opened for appending, so workers and instances sharing the file never overwrite each other's
    lines (one ``write`` per line); reopened when the path names another file (rotated away).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def write(self, entry: dict[str, Any]) -> None:
        line = (json.dumps(entry, separators=(",", ":")) + "\n").encode()
        fd = self._open()
        if os.write(fd, line) != len(line):
            raise OSError(0, "short write")

    def _open(self) -> int:
        if self.fd is not None:
            try:
                current = os.stat(self.path, follow_symlinks=False)
                mine = os.fstat(self.fd)
                if (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino):
                    return self.fd
            except FileNotFoundError:
                pass
            os.close(self.fd)
            self.fd = None
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        if stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:
            os.fchmod(fd, 0o600)  # an existing file made by someone else's umask
        self.fd = fd
        return fd


class Rfc5424Formatter(logging.Formatter):
    """``1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID - MSG`` (RFC 5424; SysLogHandler adds ``<PRI>``).

    TIMESTAMP is the row's, MSGID its action, MSG the row as one JSON object (ASCII). Over TCP
    each message ends with a newline (RFC 6587 non-transparent framing; JSON holds none).
    """

    def __init__(self, *, trailer: str = "") -> None:
        super().__init__()
        self.hostname = _header(socket.gethostname(), 255)
        self.trailer = trailer

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = record.audit_entry  # type: ignore[attr-defined]
        return (f"1 {entry['timestamp']} {self.hostname} {APP_NAME} {os.getpid()} "
                f"{_header(entry['action'], 32)} - {json.dumps(entry, separators=(',', ':'))}{self.trailer}")


def _header(text: str, limit: int) -> str:
    cleaned = "".join(c if c in _PRINTABLE else "_" for c in text)[:limit]
    return cleaned or "-"


class SyslogHandler(logging.handlers.SysLogHandler):
    """The stdlib's handler, reporting a failed send to its caller instead of printing it.

    ``handleError`` is logging's documented hook for what a failed ``emit`` does: here it keeps
    the error for ``SyslogWriter`` and drops a TCP connection, so the next row reconnects.
    """

    error: OSError | None = None

    def handleError(self, record: logging.LogRecord) -> None:
        exc = sys.exc_info()[1]
        self.error = exc if isinstance(exc, OSError) else OSError(0, type(exc).__name__)
        connected: socket.socket | None = self.socket  # type: ignore[has-type]  # typeshed leaves it untyped
        if self.socktype == socket.SOCK_STREAM and connected is not None:
            connected.close()
            self.socket = None


class SyslogWriter:
    """Sends each row as one RFC 5424 message: facility authpriv, severity info (success) or
    warning (a failure, or a finding such as drift)."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.handler: SyslogHandler | None = None

    def write(self, entry: dict[str, Any]) -> None:
        handler = self.handler or self._connect()
        record = logging.LogRecord("audit", severity(entry), __file__, 0, "", None, None)
        record.audit_entry = entry
        handler.error = None
        handler.emit(record)
        if handler.error is not None:
            raise handler.error

    def _connect(self) -> SyslogHandler:
        # A TCP server that is down refuses the connection here: the caller logs it, and the
        # next row tries again.
        tcp = self.sink.transport == "tcp"
        handler = SyslogHandler((self.sink.host, self.sink.port), SyslogHandler.LOG_AUTHPRIV,
                                socket.SOCK_STREAM if tcp else socket.SOCK_DGRAM)
        handler.append_nul = False
        handler.setFormatter(Rfc5424Formatter(trailer="\n" if tcp else ""))
        self.handler = handler
        return handler


_forwarders: dict[Sink, Forwarder] = {}
_forwarders_lock = threading.Lock()


def _forwarder(sink: Sink) -> Forwarder:
    found = _forwarders.get(sink)
    if found is not None and found.pid == os.getpid():
        return found
    with _forwarders_lock:
        found = _forwarders.get(sink)
        # A forked process (a gunicorn worker) has the parent's queue but not its thread.
        if found is None or found.pid != os.getpid():
            found = _forwarders[sink] = Forwarder(sink)
        return found

