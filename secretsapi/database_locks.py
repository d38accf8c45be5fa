"""Locks that span instances: PostgreSQL advisory locks, or a file lock when the database is SQLite.

Two uses. Every write holds file locks on its targets' stripes and on the lockfile (enough for
one machine: see ``service.state.locks``) and, when the audit database is PostgreSQL, an
advisory lock per file lock, keyed on its path, because file locks are not reliable on network
filesystems shared by several hosts. And ``serve`` applies migrations under ``migration_lock``, so that of several
instances starting at once exactly one migrates and the others wait, then find nothing to do.

Advisory locks (django-pglock) are session-level and taken on the calling thread's own Django
connection, in autocommit: they outlive no request (released in ``finally``; a connection that
cannot release one is closed, which releases it), and PostgreSQL drops them when a killed
process's connection goes away. They need a direct connection or session pooling, not
transaction pooling. A session can end while a write holds its locks (an administrator's
``pg_terminate_backend``, a network cut): each lock yields a probe the write asks before each
batch of target writes and before its lockfile rename (``service.state.locks.Held``).
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import DatabaseError, OperationalError, connections

from secretsapi.service.errors import LockTimeout
from secretsapi.service.state.locks import ExtraLock, acquire_file_lock

if TYPE_CHECKING:
    import pglock

MIGRATION_LOCK_NAME = "secretsapi:migrate"
# PostgreSQL's lock_not_available: lock_timeout expired.
LOCK_NOT_AVAILABLE = "55P03"


def advisory_key(name: str) -> int:
    """A stable signed 64-bit key for ``pg_advisory_lock``, the same in every process and host."""
    digest = hashlib.sha256(b"secretsapi:" + name.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def lockfile_key(path: Path) -> int:
    """Instances must see the shared lockfile at the same absolute path to share its lock."""
    return advisory_key("lockfile:" + str(Path(path).absolute()))


def is_postgresql(alias: str = "default") -> bool:
    return bool(connections[alias].vendor == "postgresql")


@contextmanager
def advisory_lock(key: int, timeout: float, *, alias: str = "default") -> Iterator[SessionProbe]:
    """Hold the session-level advisory lock ``key``; LockTimeout after ``timeout`` seconds.

    A negative timeout waits forever. Yields the probe that says whether this thread's
    session still holds it (and every other advisory lock it took).
    """
    # Imported on PostgreSQL only: django-pglock loads psycopg, ~0.1 s of every command's start.
    import pglock

    connection = connections[alias]
    lock = pglock.advisory(key, using=alias, timeout=None if timeout < 0 else max(0.001, timeout),
                           side_effect=pglock.Raise)
    try:
        lock.acquire()
    except OperationalError as exc:
        if getattr(exc.__cause__, "sqlstate", None) == LOCK_NOT_AVAILABLE:
            raise LockTimeout(f"timed out after {timeout:g} s waiting for the database advisory lock") from None
        raise
    keys = _held_keys(alias)
    keys[key] += 1
    try:
        yield SessionProbe(alias)
    finally:
        keys[key] -= 1
        if not keys[key]:
            del keys[key]
        _release(connection, lock)


def _held_keys(alias: str) -> Counter[int]:
    """The advisory locks this thread holds on its connection to ``alias`` (Django's
    connections are per thread, and so are their sessions' locks)."""
    held: dict[str, Counter[int]] = _held.__dict__.setdefault("keys", {})
    return held.setdefault(alias, Counter())


_held = threading.local()


@dataclass(frozen=True)
class SessionProbe:
    """Whether this thread's database session still holds every advisory lock it took.

    One query for them all (the probes of one alias are equal, so a write asks once). A
    session that ended (terminated, a network cut) lost its locks with it: its connection is
    then closed, so nothing reconnects under the write and releases go quietly.
    """

    alias: str

    def __call__(self) -> bool:
        connection = connections[self.alias]
        keys = list(_held_keys(self.alias))
        if connection.connection is None:  # closed since the locks were taken: they went with it
            return not keys
        try:
            with connection.cursor() as cursor:
                cursor.execute(HELD_SQL, [[key >> 32 & 0xFFFFFFFF for key in keys],
                                          [key & 0xFFFFFFFF for key in keys]])
                held = cursor.fetchone()[0]
        except DatabaseError:
            connection.close()
            return False
        return bool(held == len(keys))


# How many of the given advisory locks (a bigint key is split into classid, objid) the
# current session holds in the current database.
HELD_SQL = """
    SELECT count(*) FROM pg_locks
    JOIN unnest(%s::bigint[], %s::bigint[]) AS wanted(classid, objid)
      ON pg_locks.classid::bigint = wanted.classid AND pg_locks.objid::bigint = wanted.objid
    WHERE pg_locks.locktype = 'advisory' AND pg_locks.objsubid = 1 AND pg_locks.granted
      AND pg_locks.pid = pg_backend_pid()
      AND pg_locks.database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


def _release(connection: Any, lock: pglock.advisory) -> None:
    if connection.connection is None:
        return  # the session ended (see SessionProbe): PostgreSQL released its locks
    try:
        lock.release()
    except DatabaseError:
        # Its session ended while the lock was held (the write reported LockLost, or is about
        # to): closing the connection makes sure nothing of it lingers.
        connection.close()


def _lockfile_advisory_lock(path: Path, timeout: float) -> AbstractContextManager[Any]:
    return advisory_lock(lockfile_key(path), timeout)


def extra_lockfile_lock(alias: str = "default") -> ExtraLock | None:
    """The Workspace.extra_lock for the configured database: None unless it is PostgreSQL."""
    return _lockfile_advisory_lock if is_postgresql(alias) else None


@contextmanager
def migration_lock(timeout: float = 600.0, *, alias: str = "default") -> Iterator[None]:
    """Serialize ``migrate`` across instances sharing the database.

    PostgreSQL: an advisory lock on a fixed key. SQLite: a file lock beside the database file
    (the data folder by default), since every instance using it must share that filesystem.
    """
    if is_postgresql(alias):
        with advisory_lock(advisory_key(MIGRATION_LOCK_NAME), timeout, alias=alias):
            yield
        return
    name = str(settings.DATABASES[alias].get("NAME") or "")
    folder = Path(name).parent if name and name != ":memory:" and "mode=memory" not in name else None
    folder = folder or Path(settings.DATA_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    lock = acquire_file_lock(folder / "migrate.lck", timeout, "another instance's migrations")
    try:
        yield
    finally:
        lock.release()
