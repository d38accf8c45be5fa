"""Crash-safe file writes: temp file in the same folder, fsync, rename, fsync the folder."""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

NEW_FILE_MODE = 0o600
# A temp file this old is a crashed writer's leftover, not a write in progress.
STALE_TEMP_SECONDS = 60.0


def atomic_write(path: Path, data: bytes, *, new_mode: int = NEW_FILE_MODE) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never a mix.

    A new file gets ``new_mode``; an existing file keeps its mode, so an operator who
    loosened or tightened it on purpose is not overruled.
    """
    atomic_write_chunks(path, (data,), new_mode=new_mode)


def atomic_write_chunks(path: Path, chunks: Iterable[bytes], *, new_mode: int = NEW_FILE_MODE) -> None:
    """``atomic_write`` of the concatenated chunks, never all held in memory at once."""
    path = Path(path)
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode
    sweep_stale_temps(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb", buffering=1 << 20) as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


def sweep_stale_temps(path: Path) -> list[Path]:
    """Delete temp files a crashed writer left beside ``path``: they may hold secret values."""
    removed = []
    now = time.time()
    for candidate in Path(path).parent.glob(f".{glob.escape(Path(path).name)}.*.tmp"):
        try:
            if now - candidate.stat().st_mtime > STALE_TEMP_SECONDS:
                candidate.unlink()
                removed.append(candidate)
        except FileNotFoundError:
            continue
    return removed


def atomic_write_text(path: Path, text: str, *, new_mode: int = NEW_FILE_MODE) -> None:
    atomic_write(path, text.encode("utf-8"), new_mode=new_mode)


def _fsync_dir(folder: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
