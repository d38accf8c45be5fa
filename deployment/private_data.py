"""The service's own files are its own and private: the data folder 0700, every file it keeps there 0600.

The SQLite database holds the audit log, the admin's password hashes and live session keys;
``secret_key`` signs those sessions (and the shared parse store's entries); ``cache/`` holds what
the service reads back as its own. So nothing in the data folder is trusted unless it is the
service's own: ``check_data_folder`` refuses to start (ImproperlyConfigured naming the path and
the fix) when the folder, or any folder, file or link in it, belongs to another user or may be
written by group or others, whatever the sticky bit says: a folder others may write in is a
folder where someone else may have put a file before the service did (a shared ``/tmp`` is no
place for it). The same holds for an SQLite database kept elsewhere (``check_database``).

SQLite creates a database 0644 (less the umask) and gives its ``-wal`` and ``-shm`` files the
database's mode, so the database is created here, empty and 0600, before SQLite first opens it.
A process-wide umask would do it too, but would also change the modes of the target files and
folders the service writes for its users. Files and folders of the service's own that an earlier
version made readable (0644, 0755) are tightened when settings load (every command and
``serve``), with a warning naming each: they hold the same data. Never through a symlink.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pwd
import stat
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

logger = logging.getLogger("project.private_data")

# Beside the database: SQLite's journals, and the lock files of migrate and of the audit writers.
_DATABASE_COMPANIONS = ("-wal", "-shm", "-journal", ".audit.lck")


class UntrustedData(ImproperlyConfigured):
    """A file or folder the service would read as its own is not: the message names it and the fix."""


def check_data_folder(folder: Path) -> None:
    """UntrustedData unless ``folder`` (when it exists) and everything in it belong to the user
    running the service and no one else may write them; links are judged with their targets."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return  # created private (private_folder) by whoever starts first
    if stat.S_ISLNK(info.st_mode):
        _judge(folder, info, data=folder)
        info = _target(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise UntrustedData(f"the data folder {folder} is not a folder. Fix: set SERVICE_DATA_DIR to a folder, "
                            "or remove it and start again.")
    _judge(folder, info, data=folder)
    for root, folders, files in os.walk(folder):  # never into a linked folder (followlinks=False)
        for name in (*folders, *files):
            path = Path(root, name)
            entry = os.lstat(path)
            _judge(path, entry, data=folder)
            if stat.S_ISLNK(entry.st_mode):
                _judge(path, _target(path), data=folder)


def check_database(database: Path) -> None:
    """``check_data_folder``'s rule for an SQLite database kept outside the data folder: the file
    and its journals, when they exist, belong to the service's user and no one else may write them."""
    for path in (database, *(database.with_name(database.name + suffix) for suffix in _DATABASE_COMPANIONS)):
        try:
            _judge(path, os.stat(path), data=database.parent)
        except FileNotFoundError:
            continue


def _target(link: Path) -> os.stat_result:
    try:
        return os.stat(link)
    except OSError:
        raise UntrustedData(f"{link} is a link to nothing the service can read. Fix: remove it and start "
                            "again.") from None


def _judge(path: Path, info: os.stat_result, *, data: Path) -> None:
    me = os.geteuid()
    if info.st_uid != me:
        raise UntrustedData(
            f"{path} belongs to {_user(info.st_uid)}, not to {_user(me)} who runs the service: nothing in the data "
            f"folder ({data}) is trusted unless it is the service's own. Fix: remove it (the service creates what "
            "it needs), run the service as its owner, or set SERVICE_DATA_DIR to a folder of your own.")
    if not stat.S_ISLNK(info.st_mode) and stat.S_IMODE(info.st_mode) & 0o022:
        sticky = " (sticky or not)" if info.st_mode & stat.S_ISVTX else ""
        raise UntrustedData(
            f"{path} may be written by other users (mode {stat.S_IMODE(info.st_mode):04o}){sticky}: what they "
            f"could have put in the data folder ({data}) is not trusted. Fix: check it, then `chmod go-w {path}` "
            "(or remove it), or set SERVICE_DATA_DIR to a private folder of your own.")


def _user(uid: int) -> str:
    try:
        return f"user {pwd.getpwuid(uid).pw_name} ({uid})"
    except KeyError:
        return f"user {uid}"


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
