"""Locks that span instances: PostgreSQL advisory locks, or a file lock when the database is SQLite.

Two uses. Every write holds file locks on its targets' stripes and on the lockfile (enough for
one machine: see ``service.state.locks``) and, when the audit database is PostgreSQL, an
advisory lock per file lock, keyed on its path, because file locks are not reliable on network
filesystems shared by several hosts. And ``serve`` applies migrations under ``migration_lock``, so that of several
instances starting at once exactly one migrates and the others wait, then find nothing to do.

Advisory locks are session-level and taken on the calling thread's own Django connection, in
autocommit: they outlive no request (released in ``finally``; a connection that cannot release
one is closed, which releases it), and PostgreSQL drops them when a killed process's
connection goes away. They need a direct connection or session pooling, not transaction pooling.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connections, transaction

from secretsapi.service.errors import LockTimeout
from secretsapi.service.state.locks import acquire_file_lock
from secretsapi.service.workspace import ExtraLock

logger = logging.getLogger("secretsapi.database_locks")

MIGRATION_LOCK_NAME = "secretsapi:migrate"


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
def advisory_lock(key: int, timeout: float, *, alias: str = "default") -> Iterator[None]:
    """Hold the session-level advisory lock ``key``; LockTimeout after ``timeout`` seconds.

    A negative timeout waits forever.
    """
    connection = connections[alias]
    # lock_timeout is set for this statement's transaction only (set_config(..., true)), so
    # neither the session nor a surrounding transaction keeps it; 0 means no limit.
    limit = "0" if timeout < 0 else f"{max(1, round(timeout * 1000))}ms"
    try:
        with transaction.atomic(using=alias), connection.cursor() as cursor:
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [limit])
            cursor.execute("SELECT pg_advisory_lock(%s)", [key])
    except DatabaseError as exc:
        if getattr(getattr(exc, "__cause__", None), "sqlstate", None) == "55P03":
            raise LockTimeout(f"timed out after {timeout:g} s waiting for the database advisory lock") from None
        raise
    try:
        yield
    finally:
        _release(connection, key)


def _release(connection: Any, key: int) -> None:
    released = False
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
            released = bool(cursor.fetchone()[0])
    except DatabaseError:
        logger.exception("Could not release advisory lock %s", key)
    if not released:
        # Closing the session is the one sure way to drop a lock it may still hold.
        logger.error("Advisory lock %s was not released cleanly; closing the connection", key)
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
