"""One audit writer at a time per SQLite file, waiting in the kernel rather than in SQLite.

SQLite admits one writer; the others get SQLITE_BUSY and its busy handler sleeps 1, 2, 5,
10 ... 100 ms between retries, so under concurrent requests most of an audited read's time
was spent asleep. Writers of this process take a thread lock, then ``flock`` on a file beside
the database: a waiter wakes the moment the holder lets go. PostgreSQL needs none of this.
Kept for a measured reason: with ORM writes, concurrent writers' p99 is about twice as long
without it (bench/README.md, "Storage plumbing against the standard parts").

The gate comes before SQLite's write lock, always. Transactions begin IMMEDIATE (they take the
write lock when they start), so a transaction that writes an audit row inside it takes the gate
first (``audited_transaction``): taken the other way round, it would hold the write lock while
waiting for a writer that holds the gate and waits for the write lock, and both would stall
until SQLite's busy timeout (20 s), failing the other writer with "database is locked". The
gate is reentrant within a thread, so the audit writes inside such a transaction pass through.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from django.db import connection, transaction


class _Gate:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._owner: tuple[int, str] | None = None  # (pid, lock path) the descriptor belongs to
        self._depth = threading.local()  # how many times this thread holds the gate now

    @contextlib.contextmanager
    def held(self, database: str) -> Iterator[None]:
        depth = getattr(self._depth, "n", 0)
        if depth:  # this thread holds it already (an audit write inside an audited transaction)
            self._depth.n = depth + 1
            try:
                yield
            finally:
                self._depth.n = depth
            return
        with self._lock:
            fd = self._descriptor(database)
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._depth.n = 1
            try:
                yield
            finally:
                self._depth.n = 0
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _descriptor(self, database: str) -> int:
        path = f"{database}.audit.lck"
        owner = (os.getpid(), path)
        if self._fd is None or self._owner != owner:
            # A forked child must not share its parent's open file description (flock would
            # then count both as one holder): it opens its own.
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            self._owner = owner
        return self._fd


_gate = _Gate()


def audit_write_gate() -> contextlib.AbstractContextManager[None]:
    """Held around every audit write; a no-op unless the database is an SQLite file."""
    if connection.vendor != "sqlite":
        return contextlib.nullcontext()
    name = str(connection.settings_dict.get("NAME") or "")
    if not _is_file(name):
        return contextlib.nullcontext()  # in-memory test databases: one process, nothing to gate
    return _gate.held(name)


@functools.lru_cache(maxsize=8)
def _is_file(name: str) -> bool:
    return bool(name) and name != ":memory:" and not name.startswith("file:") and Path(name).parent.is_dir()


@contextlib.contextmanager
def audited_transaction() -> Iterator[None]:
    """``transaction.atomic()`` for a transaction that writes audit rows: the gate first (see above)."""
    with audit_write_gate(), transaction.atomic():
        yield
