"""One audit writer at a time per SQLite file, waiting in the kernel rather than in SQLite.

SQLite admits one writer; the others get SQLITE_BUSY and its busy handler sleeps 1, 2, 5,
10 ... 100 ms between retries, so under concurrent requests most of an audited read's time
was spent asleep. Writers of this process take a thread lock, then ``flock`` on a file beside
the database: a waiter wakes the moment the holder lets go. PostgreSQL needs none of this.
Kept for a measured reason: with ORM writes, concurrent writers' p99 is about twice as long
without it (bench/README.md, "Storage plumbing against the standard parts").
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from django.db import connection


class _Gate:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._owner: tuple[int, str] | None = None  # (pid, lock path) the descriptor belongs to

    @contextlib.contextmanager
    def held(self, database: str) -> Iterator[None]:
        with self._lock:
            fd = self._descriptor(database)
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
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
