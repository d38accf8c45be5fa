"""The files of a backup: read without following symbolic links, written atomically 0600.

A backup holds secrets (the SQLite database's admin password hashes and webhook secrets, the
generated secret key, every local target file), so it is written like any file of the service:
a temp file (0600, created exclusively, never through a symlink) in the destination's folder,
fsynced, then linked into place under its name, which must not exist yet. Restored files are
written the same way, folders 0700, each opened from its root down without following a link.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class ArchiveError(Exception):
    """A backup that cannot be written or restored as asked; the message says why."""


@dataclass(frozen=True)
class Found:
    """A regular file under a root: its path relative to the root (POSIX form) and where it is."""

    relative: str
    path: Path


def walk(root: Path, *, skip: tuple[Path, ...] = ()) -> tuple[list[Found], list[str]]:
    """Every regular file under ``root`` (sorted), and the symbolic links met (never followed).

    Lock files (``*.lck``: empty, the kernel's locks) and a crashed write's temp files
    (``.<name>.<random>.tmp``) are left out, as is anything under a path of ``skip``.
    """
    found: list[Found] = []
    links: list[str] = []
    skipped = {path.resolve() for path in skip}
    for folder, folders, files in os.walk(root, followlinks=False):
        here = Path(folder)
        for name in sorted(folders):
            if (here / name).is_symlink():
                links.append(str(here / name))
            if (here / name).resolve() in skipped or (here / name).is_symlink():
                folders.remove(name)
        for name in sorted(files):
            path = here / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                links.append(str(path))
            elif (stat.S_ISREG(info.st_mode) and not name.endswith(".lck")
                  and not (name.startswith(".") and name.endswith(".tmp")) and path.resolve() not in skipped):
                found.append(Found(path.relative_to(root).as_posix(), path))
    return sorted(found, key=lambda each: each.relative), links


@contextlib.contextmanager
def open_source(path: Path) -> Iterator[BinaryIO]:
    """``path`` for reading, refused if it is (or became) a symbolic link."""
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError as exc:
        raise ArchiveError(f"cannot read {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        yield handle


def sha256_of(handle: BinaryIO) -> str:
    digest = hashlib.sha256()
    for chunk in iter(lambda: handle.read(1 << 20), b""):
        digest.update(chunk)
    handle.seek(0)
    return digest.hexdigest()


@contextlib.contextmanager
def new_private_file(path: Path) -> Iterator[BinaryIO]:
    """A new file at ``path`` (which must not exist, nor be a link), written to a 0600 temp file
    beside it and linked into place once complete and fsynced; nothing is left on failure."""
    folder = path.parent
    if os.path.lexists(path):
        raise ArchiveError(f"{path} already exists: a backup is never written over another file")
    try:
        folder_fd = os.open(folder, DIR_FLAGS)
    except OSError as exc:
        raise ArchiveError(f"cannot write in {folder}: {exc.strerror}") from None
    temp = f".{path.name}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(temp, CREATE_FLAGS, 0o600, dir_fd=folder_fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(temp, path.name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd, follow_symlinks=False)
            except FileExistsError:
                raise ArchiveError(f"{path} already exists: a backup is never written over another file") from None
            os.fsync(folder_fd)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=folder_fd)
    finally:
        os.close(folder_fd)


def safe_relative(name: str) -> PurePosixPath:
    """A member's path as a relative one that stays under its root (no absolute, ``..`` or empty part)."""
    path = PurePosixPath(name)
    if path.is_absolute() or not path.parts or any(part in ("", ".", "..") for part in path.parts):
        raise ArchiveError(f"the backup names an unsafe path: {name!r}")
    return path


def _open_folder(root: Path, parts: tuple[str, ...], *, create: bool) -> int | None:
    """The folder ``root/parts`` opened without following a link on the way; created 0700 where
    missing when ``create``; None when missing otherwise."""
    try:
        if create:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(root, DIR_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ArchiveError(f"cannot open {root}: {exc.strerror}") from None
    for index, part in enumerate(parts):
        try:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
            next_fd = os.open(part, DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            os.close(fd)
            return None
        except OSError as exc:
            os.close(fd)
            where = root.joinpath(*parts[:index + 1])
            reason = "is a symbolic link" if exc.errno in (40, 20) else exc.strerror
            raise ArchiveError(f"{where}: {reason}; nothing was restored") from None
        os.close(fd)
        fd = next_fd
    return fd


def conflict(root: Path, relative: PurePosixPath, sha256: str) -> str | None:
    """Why the file ``root/relative`` cannot take the backup's content (None: missing, or the same)."""
    fd = _open_folder(root, relative.parts[:-1], create=False)
    if fd is None:
        return None
    try:
        try:
            info = os.stat(relative.name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return f"{root / relative} exists and is not a regular file"
        file_fd = os.open(relative.name, READ_FLAGS, dir_fd=fd)
        with os.fdopen(file_fd, "rb") as handle:
            if sha256_of(handle) == sha256:
                return None
        return f"{root / relative} exists with other content"
    finally:
        os.close(fd)


def restore_file(root: Path, relative: PurePosixPath, source: BinaryIO) -> None:
    """Write ``source`` to ``root/relative`` (0600; folders 0700), atomically, never through a link."""
    fd = _open_folder(root, relative.parts[:-1], create=True)
    if fd is None:
        raise ArchiveError(f"cannot create {root / relative.parent}")
    temp = f".{relative.name}.{secrets.token_hex(6)}.tmp"
    try:
        file_fd = os.open(temp, CREATE_FLAGS, 0o600, dir_fd=fd)
        with os.fdopen(file_fd, "wb") as handle:
            for chunk in iter(lambda: source.read(1 << 20), b""):
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(temp, relative.name, src_dir_fd=fd, dst_dir_fd=fd)
        os.fsync(fd)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=fd)
        os.close(fd)
