"""A long outcome's mentions are written ahead of it, a chunk to a transaction, on SQLite: a sync
of every secret of a big project must not hold the one writer while another project's requests
wait to write their rows (bench/README.md, "Many projects on one service")."""

from __future__ import annotations

from typing import Any

import pytest

from audit import recorder
from audit.models import AuditEntry, AuditMention
from audit.recorder import begin, finish, mention_ahead

NAMES = [f"s{i:04d}" for i in range(25)]


@pytest.fixture
def inserts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool]]:
    """Each insert of mentions: how many, and whether the outcome's row was already complete."""
    seen: list[tuple[int, bool]] = []
    original = recorder._mention

    def counted(row_id: int, timestamp: Any, names: list[str]) -> None:
        done = AuditEntry.objects.filter(pk=row_id).values_list("outcome", flat=True).get() != recorder.STARTED
        seen.append((len(names), done))
        original(row_id, timestamp, names)

    monkeypatch.setattr(recorder, "_mention", counted)
    monkeypatch.setattr(recorder, "MENTION_CHUNK", 10)
    return seen


@pytest.mark.django_db(transaction=True)
def test_mentions_written_ahead_are_chunked_and_leave_the_outcome_none_to_write(
    inserts: list[tuple[int, bool]],
) -> None:
    row = begin(action="sync", resource="secrets", user="service")
    mention_ahead(row, "secrets", {"generated": NAMES})
    finish(row, success=True, details={"generated": NAMES}, mentioned=True)

    assert inserts == [(10, False), (10, False), (5, False)]
    assert sorted(AuditMention.objects.filter(entry_id=row).values_list("secret", flat=True)) == NAMES
    assert AuditEntry.objects.get(pk=row).outcome == "ok"


@pytest.mark.django_db(transaction=True)
def test_an_outcome_finished_without_mentions_ahead_still_writes_them(inserts: list[tuple[int, bool]]) -> None:
    row = begin(action="sync", resource="secrets", user="service")
    finish(row, success=True, details={"generated": NAMES})

    assert [count for count, _ in inserts] == [25]
    assert AuditMention.objects.filter(entry_id=row).count() == len(NAMES)


@pytest.mark.django_db(transaction=True)
def test_a_sync_through_the_actions_writes_its_mentions_ahead(inserts: list[tuple[int, bool]]) -> None:
    from secretsapi.actions.auditing import audited

    with audited("sync", "secrets", "service", changes=True) as facts:
        facts["generated"] = NAMES
    row = AuditEntry.objects.get(action="sync")
    assert [count for count, _ in inserts] == [10, 10, 5]
    assert AuditMention.objects.filter(entry_id=row.pk).count() == len(NAMES)
