"""Reading and writing the lockfile: a content-keyed parse cache and atomic replacement."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from secretsapi.service.errors import LockfileStorageFull, LockfileUnreadable, LockfileUnwritable
from secretsapi.service.state.lockfile import LockDocument
from secretsapi.service.util import atomic_files


def _parse(path: Path, data: bytes) -> dict[str, Any]:
    """Top-level shape only: entries are checked lazily so drift can report each one."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LockfileUnreadable(f"lockfile {path}: not UTF-8 text") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        # exc.msg is a fixed parser phrase; str(exc) is avoided on principle.
        raise LockfileUnreadable(
            f"lockfile {path}: line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})"
        ) from None
    except RecursionError:
        # The decoder recurses once per nesting level: a hostile file nested 200,000 deep.
        raise LockfileUnreadable(f"lockfile {path}: nested too deeply to be read") from None
    except ValueError:
        # Valid JSON Python will not convert: an integer past its digit limit.
        raise LockfileUnreadable(f"lockfile {path}: holds a number too large to be read") from None
    if not isinstance(raw, dict):
        raise LockfileUnreadable(f"lockfile {path}: the top level is not a JSON object")
    if not isinstance(raw.get("version"), str):
        raise LockfileUnreadable(f"lockfile {path}: 'version' is missing or not a string")
    if not isinstance(raw.get("secrets"), dict):
        raise LockfileUnreadable(f"lockfile {path}: 'secrets' is missing or not an object")
    for key in ("metadata", "secretfile"):
        if raw.get(key) is not None and not isinstance(raw[key], dict):
            raise LockfileUnreadable(f"lockfile {path}: '{key}' is not an object")
    return raw


# Parse cache: path -> what was parsed, keyed on the content's SHA-256 rather than on stat,
# because st_mtime comes from a coarse clock and inodes are reused, so a (size, mtime, inode)
# key could match a newer file and lose an update. A file whose timestamps were already
# _SETTLED_NS in the past when it was read cannot change without new ones, so an unchanged
# stat of it is trusted by readers (no read at all); readers under a lock ask for ``exact``,
# because a network filesystem may answer stat from a stale cache.
_CACHE_SIZE = 16
_SETTLED_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class _Parsed:
    stat_key: tuple[int, ...]
    digest: bytes
    raw: dict[str, Any]
    settled: bool


_cache: dict[str, _Parsed] = {}
_derived: dict[str, tuple[tuple[int, ...], object]] = {}
_cache_lock = threading.Lock()
_parse_lock = threading.Lock()


def clear_lockfile_cache() -> None:
    with _cache_lock:
        _cache.clear()
        _derived.clear()


def _stat_key(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def read_lockfile(path: Path, *, exact: bool = False) -> LockDocument:
    """The lockfile at ``path``; a missing file is an empty document.

    ``exact`` reads the file's bytes even when its stat is unchanged: writers pass it for the
    read their update is based on. Raises LockfileUnreadable for unreadable files, invalid
    JSON or a wrong top-level shape. Entry problems surface later, from LockDocument.entry().
    """
    path = Path(path)
    key = str(path.absolute())
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and hit.settled and not exact and _unchanged(path, hit.stat_key):
        return LockDocument(hit.raw, shared=True)
    found = read_lockfile_bytes(path)
    if found is None:
        if hit is not None:
            with _cache_lock:
                # A removed lockfile's document would stay cached, for nothing, beside the
                # one the next sync builds (for 20,000 entries, ~16 MB at a worker's peak).
                if _cache.get(key) is hit:
                    del _cache[key]
        return LockDocument.empty()
    raw = _raw(key, path, found.data, found.digest)
    _remember(key, _Parsed(found.stat_key, found.digest, raw, found.settled))
    return LockDocument(raw, shared=True)


@dataclass(frozen=True, slots=True)
class LockfileBytes:
    data: bytes
    digest: bytes  # SHA-256 of data
    stat_key: tuple[int, ...]
    # Unchanged while it was read, and timestamped long enough before: its stat can be trusted.
    settled: bool


def read_lockfile_bytes(path: Path) -> LockfileBytes | None:
    """The lockfile's bytes, None when there is no file (an empty document); LockfileUnreadable
    as ``read_lockfile``."""
    try:
        with Path(path).open("rb") as handle:
            before = os.fstat(handle.fileno())
            data = handle.read()
            after = os.fstat(handle.fileno())
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LockfileUnreadable(f"lockfile {path}: cannot be read ({exc.strerror})") from None
    stat_key = _stat_key(after)
    settled = stat_key == _stat_key(before) and (
        time.time_ns() - max(after.st_mtime_ns, after.st_ctime_ns) > _SETTLED_NS
    )
    return LockfileBytes(data, hashlib.sha256(data).digest(), stat_key, settled)


def _unchanged(path: Path, stat_key: tuple[int, ...]) -> bool:
    try:
        return _stat_key(os.stat(path)) == stat_key
    except OSError:
        return False


def remember_derived(path: Path, read: LockfileBytes, value: object) -> None:
    """Keep what a reader derived from ``read`` (a status index), to be had from ``derived``
    while the file's stat is unchanged, when the read was settled (the parse cache's rule)."""
    if read.settled:
        with _cache_lock:
            _derived[str(Path(path).absolute())] = (read.stat_key, value)
            while len(_derived) > _CACHE_SIZE:
                del _derived[next(iter(_derived))]


def derived(path: Path) -> object | None:
    with _cache_lock:
        found = _derived.get(str(Path(path).absolute()))
    return found[1] if found is not None and _unchanged(path, found[0]) else None


def held_lockfile(path: Path, digest: bytes | None = None) -> LockDocument | None:
    """The document this process already holds for the lockfile at ``path``, without reading it:
    the cached parse of content with SHA-256 ``digest``, or (no digest) of a settled file whose
    stat is unchanged, as ``read_lockfile`` trusts it. None when it holds no such parse."""
    with _cache_lock:
        hit = _cache.get(str(Path(path).absolute()))
    if hit is None:
        return None
    if digest is not None:
        return LockDocument(hit.raw, shared=True) if hit.digest == digest else None
    return LockDocument(hit.raw, shared=True) if hit.settled and _unchanged(path, hit.stat_key) else None


def last_parse(path: Path) -> tuple[bytes, LockDocument] | None:
    """The SHA-256 and document of the content this process last wrote or parsed at ``path``,
    whatever the file holds now (for what is keyed on that content); None when it has none."""
    with _cache_lock:
        hit = _cache.get(str(Path(path).absolute()))
    return None if hit is None else (hit.digest, LockDocument(hit.raw, shared=True))


def parse_lockfile_bytes(path: Path, data: bytes, digest: bytes) -> LockDocument:
    """The document ``data`` (read from ``path``, SHA-256 ``digest``) holds: the cached parse
    when this process already holds that content (it wrote or read it), else parsed. Cached
    as not settled, so ``read_lockfile`` compares content before it serves the parse again."""
    key = str(Path(path).absolute())
    raw = _raw(key, path, data, digest)
    _remember(key, _Parsed((), digest, raw, False))
    return LockDocument(raw, shared=True)


def _raw(key: str, path: Path, data: bytes, digest: bytes) -> dict[str, Any]:
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and hit.digest == digest:
        return hit.raw
    # One parse at a time: the threads that find the same new file wait for the first
    # one's parse (a server worker's threads all read a lockfile a write just replaced)
    # instead of each parsing it again beside it, in as many copies.
    with _parse_lock:
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None and hit.digest == digest:
                return hit.raw
            # The old version is of no further use to the cache: let it go before the parse.
            _cache.pop(key, None)
        return _parse(path, data)


def _remember(key: str, parsed: _Parsed) -> None:
    with _cache_lock:
        _cache.pop(key, None)
        _cache[key] = parsed
        while len(_cache) > _CACHE_SIZE:
            del _cache[next(iter(_cache))]


def unwritable(path: Path, exc: OSError) -> LockfileUnwritable:
    """The engine's error for an OSError met writing the lockfile at ``path``."""
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
    cls = LockfileStorageFull if full else LockfileUnwritable
    reason = "the disk is full" if full else (exc.strerror or "an operating system error")
    return cls(f"lockfile {path} cannot be written ({reason})")


class StagedLockfile:
    """The next lockfile, in a temp file beside it (fsynced) until ``commit`` puts it in place.

    A write stages its lockfile before it touches a target, so a lockfile that cannot be
    written (a full disk, a read-only folder) stops it with nothing changed; ``write`` again
    rewrites the same temp file in place. Every failure is a LockfileUnwritable.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._doc: LockDocument | None = None
        self._digest = b""
        try:
            self._file = atomic_files.stage(self.path)
        except OSError as exc:
            raise unwritable(self.path, exc) from None

    def write(self, doc: LockDocument) -> None:
        digest = hashlib.sha256()

        def hashed(chunks: Iterator[str]) -> Iterator[bytes]:
            for chunk in chunks:
                data = chunk.encode("utf-8")
                digest.update(data)
                yield data

        try:
            self._file.write(hashed(doc.chunks()))
        except OSError as exc:
            raise unwritable(self.path, exc) from None
        self._doc, self._digest = doc, digest.digest()

    def commit(self) -> None:
        """Replace the lockfile with what was last written (a reader sees the old or the new file).

        The written document becomes the cache's copy, keyed on the digest of the bytes
        written: the next read finds the same content and skips parsing it again (for 20,000
        entries, ~20 MB and ~0.1 s). The document is shared from then on, so changing it
        copies first.
        """
        doc = self._doc
        if doc is None:
            raise ValueError("nothing was staged")
        try:
            self._file.commit()
        except OSError as exc:
            raise unwritable(self.path, exc) from None
        doc._shared = True
        try:
            stat_key = _stat_key(os.stat(self.path))
        except OSError:
            return
        # Never "settled": it was just written, so readers compare content until a read settles it.
        _remember(str(self.path.absolute()), _Parsed(stat_key, self._digest, doc._raw, False))

    def close(self) -> None:
        """Remove the temp file unless it was committed."""
        self._file.close()

    def __enter__(self) -> StagedLockfile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def write_lockfile(path: Path, doc: LockDocument) -> None:
    """Replace the lockfile atomically (see ``StagedLockfile``); 0600 when new."""
    with StagedLockfile(path) as staged:
        staged.write(doc)
        staged.commit()
