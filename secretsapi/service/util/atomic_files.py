"""Crash-safe file writes that no symbolic link can redirect.

A write goes to a temp file in the same folder, is fsynced, renamed over the file and the
folder fsynced. Every step is taken relative to a descriptor of the folder, and a folder
reached from an allowed root is walked one component at a time without following a symbolic
link, so a folder swapped for a link between a path check and its use makes the write fail
instead of landing (target or temp file) elsewhere.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType

NEW_FILE_MODE = 0o600
# Folders the service creates hold secrets or their locks: private.
NEW_FOLDER_MODE = 0o700
# A temp file this old is a crashed writer's leftover, not a write in progress.
STALE_TEMP_SECONDS = 60.0
_BUFFER = 1 << 20

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NO_LINK_FOLDER = _FOLDER | os.O_NOFOLLOW


class LinkRefused(OSError):
    """A component that must be a real folder or file is a symbolic link (or not a folder)."""

    def __init__(self, name: str) -> None:
        super().__init__(errno.ELOOP, "a symbolic link or not a folder on the way", name)

    def __reduce__(self) -> tuple[type[LinkRefused], tuple[str]]:  # pickled as it was made
        return type(self), (str(self.filename),)


def make_folders(folder: Path) -> None:
    """``mkdir -p`` where every folder created is 0700 (``Path.mkdir`` gives parents 0755)."""
    missing: list[Path] = []
    current = Path(folder).absolute()
    while not current.exists():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, NEW_FOLDER_MODE)


def open_folder(root: Path, parts: Sequence[str], *, create: bool) -> int:
    """A descriptor of ``root/parts...``: ``root`` opened as configured (symlinks there are the
    operator's), each part after it without following a symbolic link, created 0700 when
    missing and ``create``. LinkRefused when a part is a link; FileNotFoundError when missing."""
    fd = os.open(root, _FOLDER)
    try:
        for part in parts:
            fd = _step(fd, part, create=create)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _step(parent: int, name: str, *, create: bool) -> int:
    """Open ``name`` in the folder ``parent`` (closed on success) without following a link."""
    if name in ("", ".", "..") or "/" in name:
        raise LinkRefused(name)
    try:
        child = os.open(name, _NO_LINK_FOLDER, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, NEW_FOLDER_MODE, dir_fd=parent)
        return _step(parent, name, create=False)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LinkRefused(name) from None
        raise
    os.close(parent)
    return child


def read_file(folder: int, name: str) -> bytes:
    """The bytes of ``name`` in ``folder``; LinkRefused when it is a symbolic link."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LinkRefused(name) from None
        raise
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


class StagedFile:
    """A temp file beside ``name`` in the folder ``folder`` (a descriptor this object owns):
    written, and rewritten, before ``commit`` renames it over ``name``.

    Writing the temp file first lets a caller learn that the disk can hold the new content
    before it changes anything else. A new file gets ``new_mode``; an existing file keeps its
    mode, so an operator who loosened or tightened it on purpose is not overruled. Closing
    without a commit removes the temp file.
    """

    def __init__(self, folder: int, name: str, *, new_mode: int = NEW_FILE_MODE) -> None:
        self._folder = folder
        self.name = name
        self._fd: int | None = None
        try:
            try:
                st = os.stat(name, dir_fd=folder, follow_symlinks=False)
                mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else new_mode
            except FileNotFoundError:
                mode = new_mode
            sweep_stale_temps_in(folder, name)
            self.temp = f".{name}.{secrets.token_hex(6)}.tmp"
            self._fd = os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                               NEW_FILE_MODE, dir_fd=folder)
            os.fchmod(self._fd, mode)
        except BaseException:
            self.close()
            raise

    def write(self, chunks: Iterable[bytes]) -> None:
        """Make the temp file hold exactly ``chunks``, on disk (fsynced), in place of what it held."""
        fd = self._handle()
        os.lseek(fd, 0, os.SEEK_SET)
        size = 0
        buffer = bytearray()
        for chunk in chunks:
            buffer += chunk
            if len(buffer) >= _BUFFER:
                size += _write_all(fd, buffer)
                buffer.clear()
        size += _write_all(fd, buffer)
        os.ftruncate(fd, size)
        os.fsync(fd)

    def commit(self) -> None:
        """Rename the temp file over ``name``, durably (the folder is fsynced), and close."""
        self._handle()
        os.replace(self.temp, self.name, src_dir_fd=self._folder, dst_dir_fd=self._folder)
        self.temp = ""
        os.fsync(self._folder)  # the rename is durable only once the folder entry is on disk
        self.close()

    def _handle(self) -> int:
        if self._fd is None:
            raise ValueError("the staged file is closed")
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if getattr(self, "temp", ""):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.temp, dir_fd=self._folder)
            self.temp = ""
        if self._folder >= 0:
            os.close(self._folder)
            self._folder = -1

    def __enter__(self) -> StagedFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _write_all(fd: int, data: bytes | bytearray) -> int:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    return len(data)


def stage(path: Path, *, root: Path | None = None, new_mode: int = NEW_FILE_MODE) -> StagedFile:
    """A StagedFile for ``path``. With ``root`` (a folder ``path`` lies in), the folders below
    ``root`` are walked without following links (LinkRefused); without it, the folder is opened
    as it is. Missing folders are created 0700."""
    path = Path(path)
    if root is None:
        make_folders(path.parent)
        folder = os.open(path.parent, _FOLDER)
    else:
        make_folders(root)  # a configured root that does not exist yet, as before the walk
        folder = open_folder(root, path.relative_to(root).parts[:-1], create=True)
    return StagedFile(folder, path.name, new_mode=new_mode)


def atomic_write(path: Path, data: bytes, *, root: Path | None = None, new_mode: int = NEW_FILE_MODE) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never a mix
    (``root``: see ``stage``)."""
    atomic_write_chunks(path, (data,), root=root, new_mode=new_mode)


def atomic_write_chunks(path: Path, chunks: Iterable[bytes], *, root: Path | None = None,
                        new_mode: int = NEW_FILE_MODE) -> None:
    """``atomic_write`` of the concatenated chunks, never all held in memory at once."""
    with stage(path, root=root, new_mode=new_mode) as staged:
        staged.write(chunks)
        staged.commit()


def atomic_write_text(path: Path, text: str, *, root: Path | None = None, new_mode: int = NEW_FILE_MODE) -> None:
    atomic_write(path, text.encode("utf-8"), root=root, new_mode=new_mode)


def sweep_stale_temps_in(folder: int, name: str) -> list[str]:
    """Delete temp files a crashed writer left beside ``name`` in the folder descriptor ``folder``
    (they may hold secret values), once they are STALE_TEMP_SECONDS old."""
    removed = []
    now = time.time()
    prefix = f".{name}."
    for candidate in os.listdir(folder):  # a duplicate descriptor, rewound: ours is untouched
        if not (candidate.startswith(prefix) and candidate.endswith(".tmp")):
            continue
        try:
            st = os.stat(candidate, dir_fd=folder, follow_symlinks=False)
            if now - st.st_mtime > STALE_TEMP_SECONDS:
                os.unlink(candidate, dir_fd=folder)
                removed.append(candidate)
        except FileNotFoundError:
            continue
    return removed

