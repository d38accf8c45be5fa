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
        raw = _loads(text)
    except json.JSONDecodeError as exc:
        # exc.msg is a fixed parser phrase; str(exc) is avoided on principle.
        raise LockfileUnreadable(
            f"lockfile {path}: line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})"
        ) from None
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


# A large lockfile is decoded in pieces of about this many characters. json.loads holds the
# interpreter lock for the whole call, ~60 ms for 20,000 entries (several times that on a busy
# host), during which every other thread of the process waits: a server worker re-reading the
# lockfile an engine process just rewrote held up its /health that long. Between pieces
# (~1 ms each) other threads run.
_PIECE_CHARS = 262_144
_CUT_TRIES = 8
_DECODER = json.JSONDecoder()


def _skip_space(text: str, idx: int) -> int:
    """The index of the first character at or after ``idx`` that is not JSON whitespace."""
    while idx < len(text) and text[idx] in " \t\n\r":
        idx += 1
    return idx


def _loads(text: str) -> Any:
    """``json.loads(text)``; a large object's ``secrets`` member decoded in pieces.

    The pieces are cut after a ``},`` and each is decoded as an object of its own, so a cut
    that is not between two entries (inside a string, or inside an entry, as a hand-formatted
    file may allow) leaves a piece that is not a valid object, and the whole text is then
    decoded at once: the result, and every error message, are json.loads' own.
    """
    if len(text) < 4 * _PIECE_CHARS:
        return json.loads(text)
    try:
        return _loads_in_pieces(text)
    except (ValueError, IndexError):
        return json.loads(text)


def _loads_in_pieces(text: str) -> dict[str, Any]:
    idx = _skip_space(text, 0)
    if text[idx] != "{":
        raise ValueError("not an object")
    out: dict[str, Any] = {}
    idx = _skip_space(text, idx + 1)
    while text[idx] != "}":
        if text[idx] != '"':
            raise ValueError("expected a key")
        key, idx = _DECODER.raw_decode(text, idx)
        idx = _skip_space(text, idx)
        if text[idx] != ":":
            raise ValueError("expected ':'")
        idx = _skip_space(text, idx + 1)
        if key == "secrets" and text[idx] == "{":
            value, idx = _object_in_pieces(text, idx)
        else:
            value, idx = _DECODER.raw_decode(text, idx)
        out[key] = value  # a repeated key: the last value at the first place, as json.loads
        idx = _skip_space(text, idx)
        if text[idx] == ",":
            idx = _skip_space(text, idx + 1)
            if text[idx] == "}":
                raise ValueError("trailing comma")
        elif text[idx] != "}":
            raise ValueError("expected ',' or '}'")
    if _skip_space(text, idx + 1) != len(text):
        raise ValueError("extra data")
    return out


def _object_in_pieces(text: str, start: int) -> tuple[dict[str, Any], int]:
    """The object at ``text[start] == "{"`` and the index after it, decoded a piece at a time."""
    members: dict[str, Any] = {}
    idx = start + 1
    while True:
        cut = text.find("},", idx + _PIECE_CHARS)
        piece = None
        for _ in range(_CUT_TRIES):
            if cut < 0:
                break
            try:
                piece = json.loads("{" + text[idx : cut + 1] + "}")
                break
            except json.JSONDecodeError:
                # A cut inside an entry (a nested object followed by more of the entry): the
                # next ``},`` may end it. Past the object's end none will: the rest of it then
                # decodes at once below (and a text that is not valid JSON, as a whole).
                cut = text.find("},", cut + 2)
        if piece is None:
            break
        members.update(piece)
        idx = cut + 2
        if text[_skip_space(text, idx)] != '"':
            raise ValueError("a comma not followed by a member")  # e.g. a trailing comma
    rest, end = _DECODER.raw_decode("{" + text[idx:])
    members.update(rest)
    return members, idx + end - 1


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
_cache_lock = threading.Lock()
_parse_lock = threading.Lock()


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
    if hit is not None and hit.settled and not exact:
        try:
            if _stat_key(os.stat(path)) == hit.stat_key:
                return LockDocument(hit.raw, shared=True)
        except OSError:
            pass  # the read below reports it
    try:
        with path.open("rb") as handle:
            before = os.fstat(handle.fileno())
            data = handle.read()
            after = os.fstat(handle.fileno())
    except FileNotFoundError:
        if hit is not None:
            with _cache_lock:
                # A removed lockfile's document would stay cached, for nothing, beside the
                # one the next sync builds (for 20,000 entries, ~16 MB at a worker's peak).
                if _cache.get(key) is hit:
                    del _cache[key]
        return LockDocument.empty()
    except OSError as exc:
        raise LockfileUnreadable(f"lockfile {path}: cannot be read ({exc.strerror})") from None
    digest = hashlib.sha256(data).digest()
    stat_key = _stat_key(after)
    settled = stat_key == _stat_key(before) and (
        time.time_ns() - max(after.st_mtime_ns, after.st_ctime_ns) > _SETTLED_NS
    )
    if hit is not None and hit.digest == digest:
        raw = hit.raw
    else:
        # One parse at a time: the threads that find the same new file wait for the first
        # one's parse (a server worker's threads all read a lockfile a write just replaced)
        # instead of each parsing it again beside it, in as many copies.
        with _parse_lock:
            with _cache_lock:
                hit = _cache.get(key)
            if hit is not None and hit.digest == digest:
                raw = hit.raw
            else:
                with _cache_lock:
                    # The old version is of no further use to the cache: let it go before the parse.
                    _cache.pop(key, None)
                raw = _parse(path, data)
    _remember(key, _Parsed(stat_key, digest, raw, settled))
    return LockDocument(raw, shared=True)


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
