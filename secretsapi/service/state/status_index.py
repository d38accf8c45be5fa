"""Each lockfile entry's status fields, shared between processes by the lockfile's content hash.

A status of every secret reads five fields of each entry, but parsing a lockfile of 20,000
entries (32 MB with SecretZero's target provenance) builds millions of objects: ~0.4 s, half a
command line status. The index holds just those fields, or why the entry is corrupted, under a
SHA-256 of the file's exact bytes and of this code, so what it answers is what parsing the same
bytes would. A process that holds the parse already (a server's worker) reads that instead.
Whoever writes a lockfile indexes the document it still holds (``index_lockfile``), so the
status that follows a sync reads the index instead of the file's JSON.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from secretsapi.service.errors import LockEntryCorrupted
from secretsapi.service.loading.stored import DefinitionStore, code_fingerprint
from secretsapi.service.state.changes import change_of
from secretsapi.service.state.lockfile import LockDocument, LockEntry
from secretsapi.service.state.lockfile_io import (
    derived,
    held_lockfile,
    last_parse,
    parse_lockfile_bytes,
    read_lockfile_bytes,
    remember_derived,
)


class IndexedEntry(NamedTuple):
    """``LockEntry.from_raw``'s fields a status shows (a tuple: 20,000 of them unpickle in C)."""

    created_at: str
    updated_at: str
    last_rotated: str | None
    rotation_count: int
    targets: tuple[str, ...]
    change: str  # how the value last changed (``state.changes``)


class Entries(Protocol):
    def __contains__(self, key: object) -> bool: ...

    def entry(self, key: str) -> IndexedEntry | None:
        """The entry, None when absent; LockEntryCorrupted as ``LockDocument.entry``."""


class LockIndex:
    """The entries of one lockfile by key, each its fields or why it is corrupted."""

    def __init__(self, entries: Mapping[str, IndexedEntry | str]) -> None:
        self._entries = entries

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def entry(self, key: str) -> IndexedEntry | None:
        found = self._entries.get(key)
        if isinstance(found, str):
            raise LockEntryCorrupted(key, found)
        return found


class _Held:
    """A document this process already parsed: its entries read as a status needs them."""

    def __init__(self, doc: LockDocument) -> None:
        self._doc = doc

    def __contains__(self, key: object) -> bool:
        return key in self._doc

    def entry(self, key: str) -> IndexedEntry | None:
        entry = self._doc.entry(key, extra=False)
        return None if entry is None else _fields(entry, self._doc.raw_entries()[key])


EMPTY = LockIndex({})


def read_entries(path: Path, store: DefinitionStore | None) -> Entries:
    """The lockfile at ``path`` as a status reads it (EMPTY when there is none), as cheaply as it
    can be had: the parse this process holds (``held_lockfile``) or the index it last read
    (``derived``), else the index ``store`` keeps for these bytes, else the bytes parsed and
    their index stored. LockfileUnreadable as ``read_lockfile``."""
    held = held_lockfile(path)
    if held is not None:
        return _Held(held)
    recent = derived(path)
    if isinstance(recent, LockIndex):
        return recent
    found = read_lockfile_bytes(path)
    if found is None:
        return EMPTY
    held = held_lockfile(path, found.digest)
    if held is not None:
        return _Held(held)
    key = _key(found.digest)
    index = store.get(key) if store is not None else None
    if not isinstance(index, LockIndex):
        index = _build(parse_lockfile_bytes(path, found.data, found.digest))
        if store is not None:
            store.set(key, index)
    remember_derived(path, found, index)
    return index


def index_lockfile(path: Path, store: DefinitionStore) -> None:
    """Store the index of the lockfile content this process last wrote or read at ``path``,
    unless stored already: no read of the file, since the index is keyed on that content's
    digest whatever the file holds now. Nothing when this process holds none (the next status
    builds it)."""
    held = last_parse(path)
    if held is not None:
        digest, doc = held
        key = _key(digest)
        if not store.has(key):
            store.set(key, _build(doc))


def _key(digest: bytes) -> str:
    return "lockfile-status:" + hashlib.sha256(code_fingerprint().encode() + digest).hexdigest()


def _fields(entry: LockEntry, raw: Mapping[str, Any]) -> IndexedEntry:
    change = change_of(raw, created_at=entry.created_at, updated_at=entry.updated_at, last_rotated=entry.last_rotated)
    # The template outputs that render the unit without being its targets (``state.rendered.RENDERED``).
    rendered = raw.get("rendered_outputs")
    outputs = tuple(key for key in rendered if isinstance(key, str)) if isinstance(rendered, Mapping) else ()
    return IndexedEntry(entry.created_at, entry.updated_at, entry.last_rotated, entry.rotation_count,
                        (*entry.targets, *outputs), change)


def _build(doc: LockDocument) -> LockIndex:
    entries: dict[str, IndexedEntry | str] = {}
    for key, raw in doc.raw_entries().items():
        try:
            entries[key] = _fields(LockEntry.from_raw(key, raw, extra=False), raw)
        except LockEntryCorrupted as exc:
            entries[key] = exc.reason
    return LockIndex(entries)
