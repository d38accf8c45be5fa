"""The lockfile's write time of a write-only target, and whether the store wrote after it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from secretsapi.service.state.lockfile import LockEntry
from secretsapi.service.state.write_only import changed_after, recorded_at, with_writes
from secretsapi.service.targets.base import ReadBack

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
