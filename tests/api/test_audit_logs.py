"""GET /audit/logs: filters, bounds, ordering and paging fields."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework import serializers
from rest_framework.test import APIClient

from audit.models import AuditEntry, AuditMention
from audit.recorder import record
from secretsapi.api.serializers.audit import AuditEntrySerializer
from tests.factories import Project, definition, file_secret


@pytest.fixture
def rows(db: None) -> list[AuditEntry]:
    made = []
    base = timezone.now() - timedelta(hours=1)
    for i, (action, resource) in enumerate(
        [("sync", "secrets"), ("check_rotation", "secrets"), ("sync", "secret:db"), ("validate_config", "config")]
    ):
        pk = record(action=action, resource=resource, user="service", success=True, details={"i": i})
        AuditEntry.objects.filter(pk=pk).update(timestamp=base + timedelta(minutes=i))
        made.append(AuditEntry.objects.get(pk=pk))
    return made


def entries(response: Any) -> Any:
    assert response.status_code == 200, response.json()
    return response.json()["entries"]


def test_entries_are_newest_first(authed_api: APIClient, rows: list[AuditEntry]) -> None:
    got = entries(authed_api.get("/audit/logs"))
    assert [e["details"]["i"] for e in got] == [3, 2, 1, 0]


def test_entry_has_the_spec_fields_and_only_the_documented_extras(authed_api: APIClient,
                                                                  rows: list[AuditEntry]) -> None:
    got = entries(authed_api.get("/audit/logs?limit=1"))
    assert set(got[0]) == {"timestamp", "action", "resource", "user", "details", "success",
                           "outcome", "project", "definition_project", "definition", "environment", "origin"}


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

    def to_representation(self, instance: AuditEntry) -> dict[str, Any]:
        # The extras' documented rendering: an empty context column is null, the outcome never empty.
        data: dict[str, Any] = super().to_representation(instance)
        data.update({name: data[name] or None for name in ("project", "definition_project", "definition",
                                                           "environment", "origin")})
        data["outcome"] = data["outcome"] or ("ok" if data["success"] else "failed")
        return data


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


# -- the filters: success, user, since/until, secret --------------------------------------

BASE = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(minutes: int, **row: Any) -> int:
    """A row written ``minutes`` after BASE."""
    fields = {"action": "check_drift", "resource": "secrets", "user": "service", "success": True, **row}
    pk = record(**fields)
    AuditEntry.objects.filter(pk=pk).update(timestamp=BASE + timedelta(minutes=minutes))
    AuditMention.objects.filter(entry_id=pk).update(timestamp=BASE + timedelta(minutes=minutes))
    return pk


def ids(response: Any) -> list[int]:
    return [e["details"]["i"] for e in entries(response)]


@pytest.fixture
def outcomes(db: None) -> None:
    for i, (success, user) in enumerate([(True, "service"), (False, "service"), (True, "cli:alice"), (False, None)]):
        at(i, success=success, user=user, details={"i": i})


def test_success_false_keeps_only_failed_rows(authed_api: APIClient, outcomes: None) -> None:
    assert ids(authed_api.get("/audit/logs?success=false&action=check_drift")) == [3, 1]


def test_success_true_keeps_only_successful_rows(authed_api: APIClient, outcomes: None) -> None:
    assert ids(authed_api.get("/audit/logs?success=true&action=check_drift")) == [2, 0]


@pytest.mark.parametrize("value", ["1", "0", "yes", "True", "FALSE", "on"])
def test_success_accepts_only_true_or_false(authed_api: APIClient, value: str) -> None:
    response = authed_api.get(f"/audit/logs?success={value}")
    assert response.status_code == 422 and "success" in response.json()["detail"]


def test_user_filter_keeps_only_that_users_rows(authed_api: APIClient, outcomes: None) -> None:
    assert ids(authed_api.get("/audit/logs?user=cli:alice")) == [2]


def test_user_filter_combines_with_success(authed_api: APIClient, outcomes: None) -> None:
    assert ids(authed_api.get("/audit/logs?user=service&success=false&action=check_drift")) == [1]


@pytest.fixture
def minutes(db: None) -> None:
    for i in range(5):
        at(i, details={"i": i})


def test_since_is_inclusive_and_until_exclusive(authed_api: APIClient, minutes: None) -> None:
    got = ids(authed_api.get("/audit/logs?action=check_drift&since=2026-03-01T12:01:00Z&until=2026-03-01T12:03:00Z"))
    assert got == [2, 1]


def test_a_time_without_a_zone_is_utc(authed_api: APIClient, minutes: None) -> None:
    naive = ids(authed_api.get("/audit/logs?action=check_drift&since=2026-03-01T12:03:00"))
    zoned = ids(authed_api.get("/audit/logs?action=check_drift&since=2026-03-01T13:03:00%2B01:00"))
    assert naive == zoned == [4, 3]


def test_since_alone_and_until_alone_bound_one_side(authed_api: APIClient, minutes: None) -> None:
    assert ids(authed_api.get("/audit/logs?action=check_drift&until=2026-03-01T12:02:00Z")) == [1, 0]
    assert ids(authed_api.get("/audit/logs?action=check_drift&since=2026-03-01T12:04:00Z")) == [4]


@pytest.mark.parametrize("value", ["yesterday", "2026-13-01T00:00:00Z", "12:00", "0001-01-01T00:00:00%2B01:00"])
def test_a_time_that_is_not_iso_8601_or_out_of_range_is_422(authed_api: APIClient, value: str) -> None:
    response = authed_api.get(f"/audit/logs?since={value}")
    assert response.status_code == 422 and "since" in response.json()["detail"]


def test_reading_with_every_filter_is_audited_with_them(authed_api: APIClient, minutes: None) -> None:
    authed_api.get("/audit/logs?success=true&user=service&since=2026-03-01T12:00:00Z&until=2026-03-01T13:00:00"
                   "&secret=db&limit=5")
    row = AuditEntry.objects.get(action="read_audit_logs")
    assert row.details == {"limit": 5, "offset": 0, "success": True, "user": "service", "secret": "db",
                           "since": "2026-03-01T12:00:00+00:00", "until": "2026-03-01T13:00:00+00:00",
                           "returned": 0}


@pytest.fixture
def about_db(db: None) -> None:
    at(0, action="get_secret_status", resource="secret:db", details={"i": 0})
    at(1, action="sync", details={"i": 1, "generated": ["api"], "skipped": ["db"], "failed": [], "errors": []})
    at(2, action="sync", details={"i": 2, "generated": ["db2"], "skipped": [], "failed": [], "errors": []})
    at(3, action="execute_rotation", success=False,
       details={"i": 3, "rotated": [], "failed": ["db"], "errors": [{"secret": "db", "target": None, "message": "x"}]})
    at(4, action="check_drift", details={"i": 4, "secrets_with_drift": ["db"]})
    at(5, action="check_policy", details={"i": 5, "errors": 1, "secret": "db"})


def test_secret_finds_its_own_rows_and_bulk_rows_naming_it(authed_api: APIClient, about_db: None) -> None:
    assert ids(authed_api.get("/audit/logs?secret=db")) == [4, 3, 1, 0]


def test_secret_combines_with_success_and_time(authed_api: APIClient, about_db: None) -> None:
    assert ids(authed_api.get("/audit/logs?secret=db&success=false")) == [3]
    assert ids(authed_api.get("/audit/logs?secret=db&since=2026-03-01T12:01:00Z&until=2026-03-01T12:04:00Z")) == [3, 1]
    assert ids(authed_api.get("/audit/logs?secret=db&action=sync")) == [1]


def test_secret_pages_newest_first(authed_api: APIClient, about_db: None) -> None:
    assert ids(authed_api.get("/audit/logs?secret=db&limit=2&offset=1")) == [3, 1]


def test_a_sync_through_the_api_is_found_by_each_secret_it_names(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", kind="uuid"), file_secret("api", kind="uuid")))
    assert authed_api.post("/sync", {}, format="json").status_code == 200
    for name in ("db", "api"):
        assert [e["action"] for e in entries(authed_api.get(f"/audit/logs?secret={name}"))] == ["sync"]


# -- every filter is an index range scan, newest first ------------------------------------

def page_plan(authed_api: APIClient, query: str) -> str:
    """SQLite's plan of the statement that selects the page."""
    with CaptureQueriesContext(connection) as captured:
        assert authed_api.get(f"/audit/logs?{query}").status_code == 200
    (page,) = [q["sql"] for q in captured.captured_queries if "IN (SELECT" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {page}")
        return " / ".join(row[3] for row in cursor.fetchall())


@pytest.mark.parametrize(("query", "index"), [
    ("success=false", "audit_success_newest (success=?)"),
    ("user=cli:alice", "audit_user_newest (user=?)"),
    ("since=2026-03-01T12:00:00Z&until=2026-03-02T00:00:00Z", "audit_newest (timestamp>? AND timestamp<?)"),
    ("action=sync&since=2026-03-01T12:00:00Z", "audit_action_newest (action=? AND timestamp>?)"),
    ("secret=db", "audit_mention_newest (secret=?)"),
    ("secret=db&since=2026-03-01T12:00:00Z", "audit_mention_newest (secret=? AND timestamp>?)"),
])
def test_each_filter_reads_its_page_from_an_index_in_order(
    authed_api: APIClient, outcomes: None, query: str, index: str
) -> None:
    if connection.vendor != "sqlite":
        pytest.skip("the plan text is SQLite's")
    plan = page_plan(authed_api, query)
    subquery = plan.split("LIST SUBQUERY")[1]
    assert f"USING COVERING INDEX {index}" in subquery
    # The only sort is the outer one, of at most one page of rows.
    assert plan.count("TEMP B-TREE") <= 1 and "TEMP B-TREE" not in subquery.split(" / ")[1]


def test_a_date_alone_means_its_midnight_utc(authed_api: APIClient, minutes: None) -> None:
    assert ids(authed_api.get("/audit/logs?action=check_drift&until=2026-03-01")) == []
    assert ids(authed_api.get("/audit/logs?action=check_drift&since=2026-03-01")) == [4, 3, 2, 1, 0]


def test_a_text_filter_of_whitespace_matches_exactly_instead_of_being_refused_as_empty(
    authed_api: APIClient, rows: list[AuditEntry]
) -> None:
    # The schema allows any non-empty string without NUL: "\x1c" is one (Python strips it).
    assert entries(authed_api.get("/audit/logs?user=%1C&action=%20sync")) == []
