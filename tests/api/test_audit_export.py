"""GET /audit/logs as NDJSON: every matching row, oldest first, with the JSON page's filters."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.http import StreamingHttpResponse
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from audit.export import CHUNK
from audit.models import AuditEntry
from audit.recorder import record

NDJSON = "application/x-ndjson"


@pytest.fixture
def rows(db: None) -> list[int]:
    base = timezone.now() - timedelta(hours=1)
    made = []
    for i, (action, resource, success) in enumerate([
        ("sync", "secrets", True), ("check_rotation", "secrets", True), ("sync", "secret:db", False),
        ("validate_config", "config", True),
    ]):
        pk = record(action=action, resource=resource, user="service", success=success,
                    details={"i": i, "generated": ["db"] if i == 0 else []})
        AuditEntry.objects.filter(pk=pk).update(timestamp=base + timedelta(minutes=i))
        made.append(pk)
    return made


def lines(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 200
    assert response["Content-Type"] == NDJSON
    body = b"".join(response.streaming_content).decode()
    assert body.endswith("\n")
    return [json.loads(line) for line in body.splitlines()]


def exported(authed_api: APIClient, query: str = "") -> list[dict[str, Any]]:
    """The export's entries, leaving out the row the export itself wrote."""
    got = lines(authed_api.get(f"/audit/logs{query}", HTTP_ACCEPT=NDJSON))
    return [e for e in got if e["action"] != "export_audit_logs"]


def test_ndjson_lists_every_row_oldest_first_one_entry_per_line(authed_api: APIClient, rows: list[int]) -> None:
    assert [e["details"]["i"] for e in exported(authed_api)] == [0, 1, 2, 3]


def test_ndjson_lines_are_the_json_pages_entries(authed_api: APIClient, rows: list[int]) -> None:
    page = authed_api.get("/audit/logs?action=check_rotation").json()["entries"]
    assert exported(authed_api, "?action=check_rotation") == page


def test_format_jsonl_in_the_query_asks_for_ndjson(authed_api: APIClient, rows: list[int]) -> None:
    got = lines(authed_api.get("/audit/logs?format=jsonl&action=validate_config"))
    assert [e["details"]["i"] for e in got] == [3]


@pytest.mark.parametrize(("query", "expected"), [
    ("?action=sync", [0, 2]),
    ("?resource=secrets", [0, 1]),
    ("?success=false", [2]),
    ("?secret=db", [0, 2]),
    ("?action=sync&success=true", [0]),
])
def test_ndjson_applies_the_filters(authed_api: APIClient, rows: list[int], query: str, expected: list[int]) -> None:
    assert [e["details"]["i"] for e in exported(authed_api, query)] == expected


def test_ndjson_applies_the_time_bounds(authed_api: APIClient, rows: list[int]) -> None:
    stamps = [AuditEntry.objects.get(pk=pk).timestamp for pk in rows]
    since, until = stamps[1].isoformat().replace("+00:00", "Z"), stamps[3].isoformat().replace("+00:00", "Z")
    got = exported(authed_api, f"?since={since}&until={until}")
    assert [e["details"]["i"] for e in got] == [1, 2]


def test_ndjson_has_no_page_cap(authed_api: APIClient, db: None) -> None:
    AuditEntry.objects.bulk_create(
        AuditEntry(action="bulk", resource="secrets", user="service", success=True, details={"n": n})
        for n in range(2500)
    )
    got = exported(authed_api, "?action=bulk")
    assert [e["details"]["n"] for e in got] == list(range(2500))


def row_reads(queries: CaptureQueriesContext) -> list[str]:
    """The queries that read audit rows (not the export's own row, nor the mentions)."""
    table = AuditEntry._meta.db_table
    return [q["sql"] for q in queries.captured_queries
            if q["sql"].startswith("SELECT") and f'FROM "{table}"' in q["sql"]]


@pytest.mark.thorough
def test_ndjson_is_streamed_reading_rows_a_chunk_at_a_time_past_any_page_cap(
        authed_api: APIClient, db: None) -> None:
    """Constant memory: the answer is a stream, nothing is read before it is consumed, and then
    every row is read in keyset chunks of CHUNK (2 full chunks and a last short one here)."""
    total = 2 * CHUNK + 500
    AuditEntry.objects.bulk_create(
        AuditEntry(action="bulk", resource="secrets", user="service", success=True, details={"n": n})
        for n in range(total)
    )
    with CaptureQueriesContext(connection) as asked:
        response = authed_api.get("/audit/logs?action=bulk", HTTP_ACCEPT=NDJSON)
    assert isinstance(response, StreamingHttpResponse)
    assert row_reads(asked) == []
    with CaptureQueriesContext(connection) as streamed:
        got = lines(response)
    assert [e["details"]["n"] for e in got] == list(range(total))
    reads = row_reads(streamed)
    assert len(reads) == 3 and all(f"LIMIT {CHUNK}" in sql for sql in reads), reads


def test_limit_and_offset_cut_the_stream_when_given(authed_api: APIClient, rows: list[int]) -> None:
    got = lines(authed_api.get("/audit/logs?format=jsonl&resource=secrets&offset=1&limit=1"))
    assert [e["details"]["i"] for e in got] == [1]


def test_the_export_writes_its_own_audit_row_naming_the_filters(authed_api: APIClient, rows: list[int]) -> None:
    lines(authed_api.get("/audit/logs?action=sync", HTTP_ACCEPT=NDJSON))
    row = AuditEntry.objects.filter(action="export_audit_logs").get()
    assert row.success and row.details["action"] == "sync" and row.user == "service"


def test_an_error_asked_for_as_ndjson_is_the_json_error_body(authed_api: APIClient, rows: list[int]) -> None:
    response = authed_api.get("/audit/logs?limit=0", HTTP_ACCEPT=NDJSON)
    assert response.status_code == 422
    assert response["Content-Type"] == "application/json"
    assert set(response.json()) == {"error", "detail", "timestamp"}


def test_an_unauthenticated_export_is_refused(api: APIClient, rows: list[int]) -> None:
    response = api.get("/audit/logs?format=jsonl")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"


def test_the_json_page_is_unchanged_by_the_export(authed_api: APIClient, rows: list[int]) -> None:
    body = authed_api.get("/audit/logs?limit=2").json()
    assert set(body) == {"entries", "count", "page", "per_page", "total", "next", "previous"}
    assert [e["details"]["i"] for e in body["entries"]] == [3, 2]


def test_an_unknown_format_is_a_422_naming_the_choices(authed_api: APIClient, rows: list[int]) -> None:
    response = authed_api.get("/audit/logs?format=csv")
    assert response.status_code == 422
    assert "json or jsonl" in response.json()["detail"]


def test_the_export_asks_a_proxy_not_to_buffer_it(authed_api: APIClient, rows: list[int]) -> None:
    assert authed_api.get("/audit/logs?format=jsonl")["X-Accel-Buffering"] == "no"
