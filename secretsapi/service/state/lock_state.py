"""The lockfile pair: local secrets' entries in SecretZero's machine-local lockfile, the rest shared.

Secrets marked ``local: true`` keep their state in ``.gitsecrets.local.lock`` beside the shared
lockfile (SecretZero's local_secrets.py), so the shared file can be committed without one
workstation's entries. Operations see one document: ``SplitLockDocument`` is the shared
document with those secrets' entries routed to the local one. The local file gets no
``secretfile`` block (SecretZero records the definition only in the shared file). Both files
are written under the shared lockfile's lock, the local one first, each atomically: a crash
between the two leaves each file valid, and the local file ahead of the shared one. A write
stages both (``StagedState``) before it touches a target and renames them in that order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from secretsapi.service.definition.model import Definition
from secretsapi.service.state.lockfile import LockDocument, LockEntry
from secretsapi.service.state.lockfile_io import StagedLockfile, read_lockfile, write_lockfile


@dataclass(frozen=True)
class LockfilePaths:
    """The shared lockfile and SecretZero's machine-local one beside it."""

    shared: Path
    local: Path


class SplitLockDocument(LockDocument):
    """The shared lockfile's document; the entries of ``local_keys`` live in ``local``.

    A local secret's entry still in the shared file (written before it was marked local) is
    read from there until it is next written, so marking a secret local never regenerates it.
    """

    def __init__(self, shared: LockDocument, local: LockDocument, local_keys: frozenset[str]) -> None:
        super().__init__(shared._raw, shared=shared._shared)
        self.local = local
        self.local_keys = local_keys
        self.local_changed = False

    def fork(self) -> SplitLockDocument:
        copy = SplitLockDocument(super().fork(), self.local.fork(), self.local_keys)
        copy.local_changed = self.local_changed
        return copy

    def keys(self) -> list[str]:
        return list(dict.fromkeys([*super().keys(), *self.local.keys()]))

    def __contains__(self, key: object) -> bool:
        return key in self.local or super().__contains__(key)

    def entry(self, key: str, *, extra: bool = True) -> LockEntry | None:
        if key in self.local_keys and key in self.local:
            return self.local.entry(key, extra=extra)
        return super().entry(key, extra=extra)

    def raw_entry(self, key: str) -> Any:
        if key in self.local_keys and key in self.local:
            return self.local.raw_entry(key)
        return super().raw_entry(key)

    def set_entry(self, key: str, entry: LockEntry) -> None:
        if key in self.local_keys:
            self.local.set_entry(key, entry)
            self.local_changed = True
        else:
            super().set_entry(key, entry)

    def extend_entry(self, key: str, extra: Mapping[str, Any]) -> bool:
        # A local secret's entry still in the shared file is not there: set_entry moves it.
        if key in self.local_keys:
            extended = self.local.extend_entry(key, extra)
            self.local_changed = self.local_changed or extended
            return extended
        return super().extend_entry(key, extra)


def local_keys(definition: Definition) -> frozenset[str]:
    return frozenset(unit.lock_key for secret in definition.secrets if secret.local for unit in secret.units)


def read_state(paths: LockfilePaths, definition: Definition, *, exact: bool = False) -> LockDocument:
    """The lockfile as operations see it; the local file is read only when a secret is local."""
    shared = read_lockfile(paths.shared, exact=exact)
    keys = local_keys(definition)
    if not keys:
        return shared
    return SplitLockDocument(shared, read_lockfile(paths.local, exact=exact), keys)


class StagedState:
    """The next lockfile pair in temp files, on disk before the write changes anything else.

    Made from the document as the write expects to leave it; ``write`` rewrites the same
    temp files with the document it did leave (the same size or smaller: failed targets are
    left out), and ``commit`` renames them into place, the local file first as in
    ``write_state``. LockfileUnwritable when a file cannot be written; closing without a
    commit removes the temp files.
    """

    def __init__(self, paths: LockfilePaths, expected: LockDocument) -> None:
        self._files: list[tuple[StagedLockfile, bool]] = []
        try:
            if isinstance(expected, SplitLockDocument) and expected.local_changed:
                self._files.append((StagedLockfile(paths.local), True))
            self._files.append((StagedLockfile(paths.shared), False))
            self.write(expected)
        except BaseException:
            self.close()
            raise

    def write(self, doc: LockDocument) -> None:
        for staged, local in self._files:
            staged.write(doc.local if local and isinstance(doc, SplitLockDocument) else doc)

    def commit(self) -> None:
        for staged, _ in self._files:
            staged.commit()

    def close(self) -> None:
        for staged, _ in self._files:
            staged.close()

    def __enter__(self) -> StagedState:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def write_state(paths: LockfilePaths, doc: LockDocument) -> None:
    """Write what changed, the local file first; the caller holds the lockfile lock."""
    if isinstance(doc, SplitLockDocument) and doc.local_changed:
        write_lockfile(paths.local, doc.local)
        doc.local_changed = False
    write_lockfile(paths.shared, doc)
