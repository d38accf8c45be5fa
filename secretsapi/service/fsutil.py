"""Crash-safe file writes: temp file in the same folder, fsync, rename, fsync the folder."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

NEW_FILE_MODE = 0o600


def atomic_write(path: Path, data: bytes, *, new_mode: int = NEW_FILE_MODE) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never a mix.

    A new file gets ``new_mode``; an existing file keeps its mode, so an operator who
    loosened or tightened it on purpose is not overruled.
    """
    path = Path(path)
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


def atomic_write_text(path: Path, text: str, *, new_mode: int = NEW_FILE_MODE) -> None:
    atomic_write(path, text.encode("utf-8"), new_mode=new_mode)


def _fsync_dir(folder: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
