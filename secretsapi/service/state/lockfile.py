"""The lockfile: per-unit value hashes, timestamps and targets; read lazily, written atomically."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from secretsapi.service.definition.periods import MAX_DAYS
from secretsapi.service.errors import LockEntryCorrupted

LOCKFILE_VERSION = "1.0"
_HEX64 = re.compile(r"[0-9a-f]{64}")
# Canonical order of the fields this service owns; anything else in an entry is `extra`.
_KNOWN = ("hash", "created_at", "updated_at", "last_rotated", "rotation_count",
          "definition_hash", "targets")
# The latest time an entry may record: one more longest rotation period must still fit in a
# datetime, so "reference + period" can never overflow (a hand-edited 9999-12-31 would).
LATEST_TIME = datetime.max.replace(tzinfo=UTC) - timedelta(days=MAX_DAYS)


def parse_time(text: str) -> datetime:
    """An ISO 8601 timestamp as an aware UTC datetime; naive timestamps are read as UTC.

    ValueError also for a time that has no UTC equivalent (``0001-01-01T00:00:00+14:00``)
    or lies past LATEST_TIME: the rotation arithmetic could not carry it.
    """
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        moment = parsed.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{text!r} is before the first representable UTC time") from None
    if moment > LATEST_TIME:
        raise ValueError(f"{text!r} is after {LATEST_TIME.year}")
    return moment


def format_time(moment: datetime) -> str:
    """``2026-01-02T03:04:05.123456+00:00``; a naive datetime is taken as UTC, like parse_time."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat()


@dataclass(frozen=True)
class LockEntry:
    """One unit's record; timestamps stay the strings read, so untouched entries round-trip."""

    hash: str
    created_at: str
    updated_at: str
    last_rotated: str | None = None
    rotation_count: int = 0
    definition_hash: str | None = None
    targets: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_raw(cls, name: str, raw: object, *, extra: bool = True) -> LockEntry:
        """Validate one entry of ``secrets``; reasons name fields, never their content.

        ``extra=False`` leaves ``extra`` empty, for reads that never write the entry back: copying
        the other keys (``target_provenance``) was half the cost of a status of every secret.
        """
        if not isinstance(raw, dict):
            raise LockEntryCorrupted(name, "the entry is not an object")
        value_hash = raw.get("hash")
        if not isinstance(value_hash, str) or not _HEX64.fullmatch(value_hash):
            raise LockEntryCorrupted(name, "'hash' is not a 64-character lowercase hex string")
        created_at = _time_field(name, raw, "created_at", required=True)
        if created_at is None:  # required=True raised already; this narrows the type
            raise LockEntryCorrupted(name, "'created_at' is missing")
        # Older files may lack updated_at; the creation time is the honest fallback.
        updated_at = _time_field(name, raw, "updated_at", required=False) or created_at
        rotation_count = raw.get("rotation_count", 0)
        if type(rotation_count) is not int or rotation_count < 0:
            raise LockEntryCorrupted(name, "'rotation_count' is not a non-negative integer")
        definition_hash = raw.get("definition_hash")
        if definition_hash is not None and (
            not isinstance(definition_hash, str) or not _HEX64.fullmatch(definition_hash)
        ):
            raise LockEntryCorrupted(name, "'definition_hash' is not a 64-character hex string")
        targets = raw.get("targets", {})
        if not isinstance(targets, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and _HEX64.fullmatch(v)
            for k, v in targets.items()
        ):
            raise LockEntryCorrupted(name, "'targets' is not an object of target id to hex hash")
        return cls(
            hash=value_hash,
            created_at=created_at,
            updated_at=updated_at,
            last_rotated=_time_field(name, raw, "last_rotated", required=False),
            rotation_count=rotation_count,
            definition_hash=definition_hash,
            targets=dict(targets),
            extra={k: _copy_json(v) for k, v in raw.items() if k not in _KNOWN} if extra else {},
        )

    def to_raw(self) -> dict[str, Any]:
        raw: dict[str, Any] = {
            "hash": self.hash,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "last_rotated": self.last_rotated,
            "rotation_count": self.rotation_count,
            "definition_hash": self.definition_hash,
            "targets": dict(self.targets),
        }
        for key, value in self.extra.items():
            if key not in _KNOWN:
                raw[key] = _copy_json(value)
        return raw


def _time_field(name: str, raw: Mapping[str, Any], key: str, *, required: bool) -> str | None:
    value = raw.get(key)
    if value is None:
        if required:
            raise LockEntryCorrupted(name, f"'{key}' is missing")
        return None
    if not isinstance(value, str):
        raise LockEntryCorrupted(name, f"'{key}' is not a timestamp string")
    try:
        parse_time(value)
    except ValueError:
        raise LockEntryCorrupted(
            name, f"'{key}' is not an ISO 8601 timestamp between year 1 (UTC) and {LATEST_TIME.year}"
        ) from None
    return value


def _copy_json(value: Any) -> Any:
    # JSON data is only dicts, lists and immutable scalars; this is ~3x faster than deepcopy.
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    return value


class LockDocument:
    """The whole lockfile as its raw dict; unknown keys anywhere are kept as read.

    Documents from read_lockfile share the parsed dict with the cache and copy it on the
    first mutation (copy-on-write), so read-only callers pay nothing for the copy. The copy
    is shallow where this class only ever replaces: entries are replaced whole by set_entry,
    never edited, so they stay shared; the objects edited in place (``metadata``,
    ``secretfile``) are copied.
    """

    def __init__(self, raw: dict[str, Any], *, shared: bool = False) -> None:
        self._raw = raw
        self._shared = shared

    @classmethod
    def empty(cls) -> LockDocument:
        return cls({"version": LOCKFILE_VERSION, "secrets": {}, "metadata": {}})

    @property
    def raw(self) -> dict[str, Any]:
        """The raw dict, owned by this document. Entries under ``secrets`` may be shared with
        the cache: replace them (set_entry), never edit them in place."""
        self._own()
        return self._raw

    @property
    def version(self) -> str:
        return str(self._raw["version"])

    @property
    def metadata(self) -> dict[str, Any]:
        """The mutable top-level ``metadata`` object, created if absent."""
        raw = self.raw
        if not isinstance(raw.get("metadata"), dict):
            raw["metadata"] = {}
        metadata: dict[str, Any] = raw["metadata"]
        return metadata

    @property
    def secretfile(self) -> dict[str, Any] | None:
        """A copy of the ``secretfile`` block, or None."""
        block = self._raw.get("secretfile")
        return _copy_json(block) if isinstance(block, dict) else None

    def keys(self) -> list[str]:
        return list(self._raw["secrets"])

    def __contains__(self, key: object) -> bool:
        return key in self._raw["secrets"]

    def raw_entries(self) -> Mapping[str, Any]:
        """Every entry as read, unchecked and not copied (read-only): for scans that must not
        stop at a corrupted entry nor pay for a copy. The same object while the file is
        unchanged (the read cache shares it), so a scan's result can be kept by its identity."""
        entries: Mapping[str, Any] = self._raw["secrets"]
        return entries

    def raw_entry(self, key: str) -> Any:
        """The entry for ``key`` as read, unchecked and not copied (read-only); None when absent."""
        return self._raw["secrets"].get(key)

    def entry(self, key: str, *, extra: bool = True) -> LockEntry | None:
        """The entry for ``key``, None when absent; LockEntryCorrupted when it has wrong types.
        ``extra=False``: without its other keys (``LockEntry.from_raw``), never to be written back."""
        secrets: dict[str, Any] = self._raw["secrets"]
        if key not in secrets:
            return None
        return LockEntry.from_raw(key, secrets[key], extra=extra)

    def set_entry(self, key: str, entry: LockEntry) -> None:
        """Write ``entry``, keeping the existing key order and every key it does not set.

        Unknown keys already in the stored entry are never dropped, even when ``entry.extra``
        lacks them.
        """
        secrets: dict[str, Any] = self.raw["secrets"]
        new = entry.to_raw()
        old = secrets.get(key)
        if isinstance(old, dict):
            merged = {k: new.pop(k) if k in new else v for k, v in old.items()}
            merged.update(new)
            new = merged
        secrets[key] = new

    def extend_entry(self, key: str, extra: Mapping[str, Any]) -> bool:
        """Set ``extra``'s keys beside the fields of ``key``'s entry, as ``set_entry`` of the
        entry with them in its ``extra`` would, without reading it into a LockEntry and back
        (for the 5,000 entries of a cold sync, a sixth of it). False, changing nothing, when the
        entry is missing or lacks one of its fields (which ``set_entry`` would add): the caller
        then takes ``set_entry``. The caller has checked the entry (``entry``), and hands
        ``extra``'s values over: the document keeps them, uncopied, so they are never changed
        afterwards (like every entry, see ``raw``)."""
        secrets: dict[str, Any] = self.raw["secrets"]
        old = secrets.get(key)
        if not isinstance(old, dict) or any(name not in old for name in _KNOWN):
            return False
        secrets[key] = {**old, **{name: value for name, value in extra.items() if name not in _KNOWN}}
        return True

    def remove_entry(self, key: str) -> bool:
        """Drop ``key``'s entry; whether there was one."""
        secrets: dict[str, Any] = self.raw["secrets"]
        return secrets.pop(key, None) is not None

    def set_secretfile(self, filename: str, text_hash: str, variables_hash: str,
                       var_files: Sequence[str], synced_at: str | datetime) -> None:
        """Update the sync record, keeping the block's other keys (e.g. sync_identity)."""
        raw = self.raw
        block = raw.get("secretfile")
        if not isinstance(block, dict):
            block = {}
            if "secretfile" not in raw:
                # SecretZero puts the block between secrets and metadata; so do we.
                items = list(raw.items())
                at = next((i + 1 for i, (k, _) in enumerate(items) if k == "secrets"), len(items))
                items.insert(at, ("secretfile", block))
                raw.clear()
                raw.update(items)
            raw["secretfile"] = block
        block["filename"] = filename
        block["hash"] = text_hash
        block["synced_at"] = synced_at if isinstance(synced_at, str) else format_time(synced_at)
        block["var_files"] = list(var_files)
        block["variables_hash"] = variables_hash

    def fork(self) -> LockDocument:
        """An independent copy, cheap: both copy their data on their next change."""
        self._shared = True
        return LockDocument(self._raw, shared=True)

    def dumps(self) -> str:
        return "".join(self.chunks())

    def chunks(self) -> Iterator[str]:
        """The file's text (``json.dumps(raw, indent=2, ensure_ascii=False)`` and a newline),
        one entry at a time (``indented``), so the whole document is never held as text twice."""
        raw = self._raw
        if not raw:
            yield "{}\n"
            return
        last = len(raw) - 1
        for index, (key, value) in enumerate(raw.items()):
            yield ("{\n  " if index == 0 else "  ") + indented(key) + ": "
            if key == "secrets" and isinstance(value, dict) and value:
                yield "{\n"
                entries = len(value) - 1
                for number, (name, entry) in enumerate(value.items()):
                    body = indented(entry).replace("\n", "\n    ")
                    yield f"    {indented(name)}: {body}{',' if number < entries else ''}\n"
                yield "  }"
            else:
                yield indented(value).replace("\n", "\n  ")
            yield ",\n" if index < last else "\n}\n"

    def _own(self) -> None:
        if self._shared:
            raw = dict(self._raw)
            if isinstance(raw.get("secrets"), dict):
                raw["secrets"] = dict(raw["secrets"])
            for key in ("metadata", "secretfile"):
                if isinstance(raw.get(key), dict):
                    raw[key] = _copy_json(raw[key])
            self._raw = raw
            self._shared = False


# The lockfile's layout. Encoded strings never hold a raw newline (JSON escapes it), so a
# value encoded on its own is re-indented for its depth by replacing "\n".
_INDENTED = json.JSONEncoder(indent=2, ensure_ascii=False)
# Deeper than this, a value is left to the standard library (orjson stops at 255 levels).
_PLAIN_DEPTH = 200


def indented(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, byte for byte.

    Python 3.11 indents JSON in pure Python, one call per token: 0.19 s of CPU for the 5,000
    entries of a cold sync, where orjson takes 8 ms (bench/README.md, "jobs without a toll").
    orjson writes the same text for strings, integers, booleans, null, objects and arrays; a
    float it writes otherwise (``0.00001`` for ``1e-05``, ``null`` for ``Infinity``), and it
    refuses an integer past 64 bits, a key that is not a string or a lone surrogate: such a
    value (an entry another tool wrote) is encoded by the standard library, as before.
    """
    if _plain(value, 0):
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONEncodeError:
            pass
    return _INDENTED.encode(value)


def _plain(value: Any, depth: int) -> bool:
    """Whether ``value`` holds only the types orjson writes exactly as the standard library
    does (exact types: a subclass may encode itself otherwise)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if depth > _PLAIN_DEPTH:
        return False
    if kind is not dict and kind is not list:
        return False
    for item in value.values() if kind is dict else value:  # noqa: SIM110 - half the time of all() here
        if not _plain(item, depth + 1):
            return False
    return True
