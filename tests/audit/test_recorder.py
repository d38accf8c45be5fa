"""record(): rows PostgreSQL can store whatever the request carried, and the secrets each row is about."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from audit.models import AuditEntry, AuditMention
from audit.recorder import RESOURCE_MAX, begin, finish, record


@pytest.mark.django_db
def test_an_overlong_resource_is_clipped_with_a_hash_that_keeps_it_distinct() -> None:
    first = AuditEntry.objects.get(pk=record(action="sync", resource="secret:" + "a" * 400, user=None, success=False))
    second = AuditEntry.objects.get(
        pk=record(action="sync", resource="secret:" + "a" * 399 + "b", user=None, success=False))
    assert len(first.resource) == RESOURCE_MAX
    assert first.resource != second.resource


@pytest.mark.django_db
def test_nul_and_lone_surrogates_are_replaced_in_details() -> None:
    row = AuditEntry.objects.get(pk=record(action="render_config", resource="config", user=None, success=True,
                                           details={"variables": ["a\x00b", "\ud800"], "k\x00": 1}))
    assert row.details == {"variables": ["a\ufffdb", "\ufffd"], "k\ufffd": 1}


def mentions(row_id: int) -> list[str]:
    return sorted(AuditMention.objects.filter(entry_id=row_id).values_list("secret", flat=True))


@pytest.mark.django_db
def test_a_row_about_one_secret_mentions_it() -> None:
    assert mentions(record(action="get_secret_status", resource="secret:db", user=None, success=True)) == ["db"]


@pytest.mark.django_db
def test_a_bulk_row_mentions_every_secret_its_details_name() -> None:
    details = {"generated": ["a"], "skipped": ["b"], "failed": ["c"], "repaired": ["d"], "rotated": ["e"],
               "secrets_with_drift": ["f"], "unreadable": ["g"], "secret_name": "h",
               "errors": [{"secret": "c", "target": None, "message": "m"}]}
    row = record(action="sync", resource="secrets", user=None, success=True, details=details)
    assert mentions(row) == list("abcdefgh")


@pytest.mark.django_db
def test_counts_and_other_keys_are_not_mentions() -> None:
    details = {"errors": 3, "warnings": 1, "count": 2, "secret": "x", "variables": ["y"], "failed": "z"}
    assert mentions(record(action="check_policy", resource="secrets", user=None, success=True, details=details)) == []


@pytest.mark.django_db
def test_a_mention_carries_its_rows_timestamp() -> None:
    row = AuditEntry.objects.get(pk=record(action="x", resource="secret:db", user=None, success=True))
    assert AuditMention.objects.get(entry=row).timestamp == row.timestamp


@pytest.mark.django_db
def test_finishing_a_started_row_adds_the_secrets_its_outcome_names() -> None:
    started = begin(action="sync", resource="secret:a", user=None, details={"secret_name": "a"})
    assert mentions(started) == ["a"]
    finish(started, success=False, details={"secret_name": "a", "generated": ["a"], "failed": ["b"]})
    assert mentions(started) == ["a", "b"]


@pytest.mark.migrations
@pytest.mark.django_db(transaction=True)
def test_migrating_backfills_mentions_of_older_rows() -> None:
    call_command("migrate", "audit", "0001", verbosity=0)
    try:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO audit_auditentry (timestamp, action, resource, user, details, success) "
                           "VALUES (%s, 'sync', 'secret:c', NULL, %s, %s)",
                           [timezone.now(), '{"generated": ["a", "b"]}', True])
    finally:
        call_command("migrate", "audit", verbosity=0)
    (row,) = AuditEntry.objects.values_list("id", flat=True)
    assert mentions(row) == ["a", "b", "c"]
