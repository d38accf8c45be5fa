"""The service's own files are private: the data folder 0700, every file it keeps there 0600.

The SQLite database holds the audit log, the admin's password hashes and live session keys;
``secret_key`` signs those sessions. SQLite creates a database 0644 (less the umask) and gives
its ``-wal`` and ``-shm`` files the database's mode, so the database is created here, empty and
0600, before SQLite first opens it. A process-wide umask would do it too, but would also change
the modes of the target files and folders the service writes for its users.

Files and folders made by an earlier version (0644, 0755) are tightened when settings load
(every command and ``serve``), with a warning naming each: they hold the same data. Only what
belongs to the running user is touched, never through a symlink, and a shared folder (sticky
bit, as /tmp) keeps its mode: its files are private all the same.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

logger = logging.getLogger("project.private_data")

# Beside the database: SQLite's journals, and the lock files of migrate and of the audit writers.
_DATABASE_COMPANIONS = ("-wal", "-shm", "-journal", ".audit.lck")


def private_folder(folder: Path) -> None:
    """Create ``folder`` (0700) if missing, else remove group and other access from it."""
    try:
        folder.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        tighten(folder)


def sqlite_file(name: str) -> Path | None:
    """The file an SQLite database NAME stands for; None for an in-memory database or a URI."""
    if not name or name == ":memory:" or name.startswith("file:"):
        return None
    return Path(name)


def private_sqlite(database: Path) -> None:
    """Create the database file (0600) if missing; tighten it, its companions and migrate's lock.

    A missing folder is created 0700; an existing one keeps its mode (the data folder is
    tightened on its own): a database may be put in a folder that holds other things.
    """
    database.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    for path in (database, *(database.with_name(database.name + suffix) for suffix in _DATABASE_COMPANIONS),
                 database.parent / "migrate.lck"):
        tighten(path)


def tighten(path: Path) -> None:
    """Remove group and other access from the file or folder ``path`` if it is the user's own."""
    # Not ours to change (EPERM) or gone meanwhile: left as it is.
    with contextlib.suppress(OSError):
        _tighten(path, directory=path.is_dir() and not path.is_symlink())


def _tighten(path: Path, *, directory: bool) -> None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_DIRECTORY if directory else os.O_NONBLOCK)
    fd = os.open(path, flags)  # refuses a symlink (O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        loose = stat.S_IMODE(info.st_mode) & 0o077
        if not loose or info.st_uid != os.geteuid() or (directory and info.st_mode & stat.S_ISVTX):
            return
        if not directory and not stat.S_ISREG(info.st_mode):
            return
        mode = stat.S_IMODE(info.st_mode) & ~0o077
        os.fchmod(fd, mode)
        logger.warning("%s was readable by other users (mode %04o): now %04o, as the service's files must be.",
                       path, stat.S_IMODE(info.st_mode), mode)
    finally:
        os.close(fd)
