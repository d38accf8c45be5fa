"""record(): rows PostgreSQL can store whatever the request carried."""

from __future__ import annotations

import pytest

from audit.models import AuditEntry
from audit.recorder import RESOURCE_MAX, record


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
