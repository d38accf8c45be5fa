"""GET /audit/logs: filters, bounds, ordering and paging fields."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework import serializers
from rest_framework.test import APIClient

from audit.models import AuditEntry
from audit.recorder import record
from secretsapi.api.serializers.audit import AuditEntrySerializer


@pytest.fixture
def rows(db: None) -> list[AuditEntry]:
    made = []
    base = timezone.now() - timedelta(hours=1)
    for i, (action, resource) in enumerate(
        [("sync", "secrets"), ("check_rotation", "secrets"), ("sync", "secret:db"), ("validate_config", "config")]
    ):
        pk = record(action=action, resource=resource, user="api-key", success=True, details={"i": i})
        AuditEntry.objects.filter(pk=pk).update(timestamp=base + timedelta(minutes=i))
        made.append(AuditEntry.objects.get(pk=pk))
    return made


def entries(response: Any) -> Any:
    assert response.status_code == 200, response.json()
    return response.json()["entries"]


def test_entries_are_newest_first(authed_api: APIClient, rows: list[AuditEntry]) -> None:
    got = entries(authed_api.get("/audit/logs"))
    assert [e["details"]["i"] for e in got] == [3, 2, 1, 0]


def test_entry_has_exactly_the_spec_fields(authed_api: APIClient, rows: list[AuditEntry]) -> None:
    got = entries(authed_api.get("/audit/logs?limit=1"))
    assert set(got[0]) == {"timestamp", "action", "resource", "user", "details", "success"}


def test_action_filter_keeps_only_that_action(authed_api: APIClient, rows: list[AuditEntry]) -> None:
    got = entries(authed_api.get("/audit/logs?action=sync"))
    assert [e["resource"] for e in got] == ["secret:db", "secrets"]


def test_resource_filter_keeps_only_that_resource(authed_api: APIClient, rows: list[AuditEntry]) -> None:
    got = entries(authed_api.get("/audit/logs?resource=secrets"))
    assert [e["action"] for e in got] == ["check_rotation", "sync"]


def test_both_filters_combine(authed_api: APIClient, rows: list[AuditEntry]) -> None:
    got = entries(authed_api.get("/audit/logs?action=sync&resource=secrets"))
    assert [e["details"]["i"] for e in got] == [0]


def test_paging_fields_follow_limit_and_offset(authed_api: APIClient, rows: list[AuditEntry]) -> None:
    body = authed_api.get("/audit/logs?limit=2&offset=2").json()
    assert (body["count"], body["page"], body["per_page"]) == (2, 2, 2)
    assert [e["details"]["i"] for e in body["entries"]] == [1, 0]


def test_default_page_size_is_50(authed_api: APIClient, rows: list[AuditEntry]) -> None:
    body = authed_api.get("/audit/logs").json()
    assert (body["per_page"], body["page"], body["count"]) == (50, 1, 4)


def test_offset_past_the_end_gives_an_empty_page(authed_api: APIClient, rows: list[AuditEntry]) -> None:
    body = authed_api.get("/audit/logs?offset=100").json()
    assert body["entries"] == [] and body["count"] == 0


@pytest.mark.parametrize("query", ["limit=0", "limit=1001", "limit=-5", "offset=-1", "limit=abc", "offset=x"])
def test_out_of_range_or_wrong_type_parameters_are_422(authed_api: APIClient, query: str) -> None:
    response = authed_api.get(f"/audit/logs?{query}")
    assert response.status_code == 422
    body = response.json()
    assert set(body) == {"error", "detail", "timestamp"}
    assert query.split("=")[0] in body["detail"]


def test_limit_1000_is_accepted(authed_api: APIClient, rows: list[AuditEntry]) -> None:
    assert authed_api.get("/audit/logs?limit=1000").json()["per_page"] == 1000


def test_reading_the_log_is_audited(authed_api: APIClient, rows: list[AuditEntry]) -> None:
    authed_api.get("/audit/logs?action=sync&limit=5")
    row = AuditEntry.objects.filter(action="read_audit_logs").get()
    assert row.resource == "audit" and row.success
    assert row.details == {"limit": 5, "offset": 0, "action": "sync", "returned": 2}


class GenericEntrySerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    """DRF's own field walk over the same fields: what the page's entries must equal."""

    class Meta:
        model = AuditEntry
        fields = AuditEntrySerializer.Meta.fields


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris", "America/St_Johns"])
def test_entries_equal_drfs_generic_rendering(rows: list[AuditEntry], zone: str) -> None:
    AuditEntry.objects.filter(pk=rows[0].pk).update(user=None, success=False)
    page = list(AuditEntry.objects.all())
    with timezone.override(zone):
        assert AuditEntrySerializer(page, many=True).data == GenericEntrySerializer(page, many=True).data


def test_a_deep_page_is_the_same_rows_as_slicing_the_whole_log(authed_api: APIClient, db: None) -> None:
    for i in range(30):
        record(action="sync" if i % 3 else "check_drift", resource="secrets", user=None, success=True, details={"i": i})
    newest_first = [e.details["i"] for e in AuditEntry.objects.filter(action="sync")]
    got = entries(authed_api.get("/audit/logs?action=sync&limit=7&offset=11"))
    assert [e["details"]["i"] for e in got] == newest_first[11:18]
