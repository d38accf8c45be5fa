"""The lockfile's write time of a write-only target, and whether the store wrote after it."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.definition.model import Definition
from secretsapi.service.state.identity import sync_identity
from secretsapi.service.state.lock_state import SplitLockDocument
from secretsapi.service.state.lockfile import LockDocument, LockEntry
from secretsapi.service.state.outcome import Written
from secretsapi.service.state.write_only import changed_after, record_provenance, recorded_at, with_writes
from secretsapi.service.targets.base import ReadBack
from tests.factories import definition as factory_definition
from tests.factories import file_secret, load_document

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _entry(provenance: Any = None) -> LockEntry:
    extra = {} if provenance is None else {"target_provenance": provenance}
    return LockEntry(hash="a" * 64, created_at=T0.isoformat(), updated_at=T0.isoformat(), last_rotated=None,
                     rotation_count=0, definition_hash=None, targets={}, extra=extra)


def test_without_provenance_the_entrys_update_time_is_the_targets() -> None:
    assert recorded_at(_entry(), ["gh/github_secret/o/r"]) == T0


def test_the_latest_provenance_record_of_the_target_or_its_secretzero_id_wins() -> None:
    provenance = {
        "gh/github_secret/": [{"updated_at": (T0 + timedelta(hours=1)).isoformat(), "actor": {}}],
        "gh/github_secret/o/r": [{"updated_at": (T0 + timedelta(hours=2)).isoformat(), "actor": {}},
                                 {"updated_at": (T0 + timedelta(hours=3)).isoformat(), "actor": {}}],
        "gh/github_secret/o/other": [{"updated_at": (T0 + timedelta(hours=9)).isoformat(), "actor": {}}],
    }
    assert recorded_at(_entry(provenance), ["gh/github_secret/o/r", "gh/github_secret/"]) == T0 + timedelta(hours=3)
    assert recorded_at(_entry(provenance), ["gh/github_secret/"]) == T0 + timedelta(hours=1)


def test_unreadable_provenance_is_passed_over() -> None:
    provenance = {"t": [{"updated_at": "yesterday"}, {"updated_at": 5}, "x"], "u": "not a list"}
    assert recorded_at(_entry(provenance), ["t", "u"]) == T0
    assert recorded_at(_entry(["not", "a", "mapping"]), ["t"]) == T0


def test_a_store_write_is_a_change_only_past_the_clock_allowance() -> None:
    def back(moment: datetime | None) -> ReadBack:
        return ReadBack(True, None, "o/r", verifiable=False, updated_at=moment)

    assert changed_after(back(T0 + timedelta(seconds=5)), T0) is False
    assert changed_after(back(T0 + timedelta(seconds=6)), T0) is True
    assert changed_after(back(None), T0) is None


def test_write_records_keep_other_targets_and_the_last_three() -> None:
    extra: dict[str, Any] = {"target_provenance": {"other": [{"updated_at": "x", "actor": {"client": "cli"}}]}}
    for hours in range(5):
        extra = with_writes(extra, ["t"], T0 + timedelta(hours=hours))
    records = extra["target_provenance"]
    assert records["other"] == [{"updated_at": "x", "actor": {"client": "cli"}}]
    assert [r["updated_at"] for r in records["t"]] == [(T0 + timedelta(hours=h)).isoformat() for h in (2, 3, 4)]


# --- record_provenance: one record per written target, each entry as set_entry would leave it


def _written_doc(tmp_path: Path, raw_entry: dict[str, Any]) -> tuple[LockDocument, Definition, list[Written]]:
    definition = load_document(tmp_path, factory_definition(file_secret("s", "out/a.env")))
    secret = definition.secret("s")
    target_id = "local/file/out/a.env"
    doc = LockDocument({"version": "1.0", "secrets": {secret.units[0].lock_key: raw_entry}})
    return doc, definition, [Written(secret, secret.units[0].lock_key, "a" * 64, {target_id: "a" * 64})]


def _as_set_entry_leaves_it(raw_entry: dict[str, Any]) -> dict[str, Any]:
    """The entry as ``set_entry`` of it with the new record leaves it (the way every write took)."""
    doc = LockDocument({"version": "1.0", "secrets": {"s": raw_entry}})
    entry = doc.entry("s")
    assert entry is not None
    doc.set_entry("s", replace(entry, extra=with_writes(entry.extra, ["local/file/out/a.env"], T0)))
    return dict(doc.raw["secrets"]["s"])


FULL = {"hash": "a" * 64, "created_at": T0.isoformat(), "updated_at": T0.isoformat(), "last_rotated": None,
        "rotation_count": 0, "definition_hash": None, "targets": {"local/file/out/a.env": "a" * 64},
        "target_provenance": {"local/file/out/a.env": [{"updated_at": "2025-01-01T00:00:00+00:00", "actor": {}}],
                              "other": [{"updated_at": "2025-01-01T00:00:00+00:00", "actor": {"client": "cli"}}]},
        "last_change": {"how": "generated", "at": T0.isoformat()}}
# As SecretZero writes one: no definition_hash, last_rotated or rotation_count; its own keys.
SPARSE = {"hash": "a" * 64, "created_at": T0.isoformat(), "targets": {}, "metadata": {"note": "kept"}}


@pytest.mark.parametrize("raw_entry", [FULL, SPARSE, {k: v for k, v in FULL.items() if k != "target_provenance"}],
                         ids=["every field and earlier records", "secretzero's sparse entry", "no records yet"])
def test_a_provenance_record_leaves_each_entry_as_set_entry_would(tmp_path: Path, raw_entry: dict[str, Any]) -> None:
    doc, definition, written = _written_doc(tmp_path, raw_entry)
    record_provenance(doc, definition, written, T0)
    entry = doc.raw["secrets"][written[0].lock_key]
    expected = _as_set_entry_leaves_it(raw_entry)
    assert json.dumps(entry) == json.dumps(expected)  # the same keys, in the same order
    assert entry["target_provenance"]["local/file/out/a.env"][-1] == {"updated_at": T0.isoformat(),
                                                                      "actor": sync_identity()}


def test_a_provenance_record_never_changes_the_entry_it_replaced(tmp_path: Path) -> None:
    raw_entry = json.loads(json.dumps(FULL))
    doc, definition, written = _written_doc(tmp_path, raw_entry)
    record_provenance(doc, definition, written, T0)
    assert raw_entry == FULL  # a document read from the cache shares its entries


def test_a_corrupted_entry_gets_no_provenance_record(tmp_path: Path) -> None:
    corrupted = {**FULL, "rotation_count": "three"}
    doc, definition, written = _written_doc(tmp_path, corrupted)
    record_provenance(doc, definition, written, T0)
    assert doc.raw["secrets"][written[0].lock_key] == corrupted


@pytest.mark.parametrize("in_local", [True, False], ids=["in the local file", "still in the shared file"])
def test_a_local_secrets_provenance_record_goes_to_the_local_file(tmp_path: Path, in_local: bool) -> None:
    _, definition, written = _written_doc(tmp_path, FULL)
    key = written[0].lock_key
    shared = LockDocument({"version": "1.0", "secrets": {} if in_local else {key: FULL}})
    local = LockDocument({"version": "1.0", "secrets": {key: FULL} if in_local else {}})
    doc = SplitLockDocument(shared, local, frozenset({key}))
    record_provenance(doc, definition, written, T0)
    assert doc.local_changed
    assert json.dumps(doc.local.raw["secrets"][key]) == json.dumps(_as_set_entry_leaves_it(FULL))
    assert doc.raw["secrets"].get(key) == (None if in_local else FULL)
