"""Listings page as DRF's limit/offset pagination does: the spec's fields, then `total` (every
match of the filter) and `next` / `previous` links a client follows to the end."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from rest_framework.test import APIClient

from audit.recorder import record
from tests.webhooks.support import endpoint
from webhooks import outbox


@pytest.fixture
def syncs(db: None) -> list[int]:
    return [record(action="sync", resource=f"secret:s{i}", user="service", success=True, details={"i": i})
            for i in range(7)]


def page(client: APIClient, url: str) -> dict[str, Any]:
    response = client.get(url)
    assert response.status_code == 200, response.json()
    body: dict[str, Any] = response.json()
    return body


def test_a_page_keeps_the_spec_fields_and_adds_the_total_and_links(authed_api: APIClient, syncs: list[int]) -> None:
    body = page(authed_api, "/audit/logs?action=sync&limit=3")
    assert (body["count"], body["page"], body["per_page"], body["total"]) == (3, 1, 3, 7)
    assert body["previous"] is None
    query = parse_qs(urlsplit(body["next"]).query)
    assert (query["limit"], query["offset"], query["action"]) == (["3"], ["3"], ["sync"])


def test_following_next_reads_every_match_once_and_ends(authed_api: APIClient, syncs: list[int]) -> None:
    seen: list[int] = []
    url: str | None = "/audit/logs?action=sync&limit=3"
    for _ in range(10):  # bounded: 7 rows in pages of 3
        if url is None:
            break
        body = page(authed_api, url)
        seen += [entry["details"]["i"] for entry in body["entries"]]
        url = body["next"]
    assert url is None
    assert seen == [6, 5, 4, 3, 2, 1, 0]


def test_the_last_page_links_back_and_not_on(authed_api: APIClient, syncs: list[int]) -> None:
    body = page(authed_api, "/audit/logs?action=sync&limit=3&offset=6")
    assert (body["count"], body["page"], body["next"]) == (1, 3, None)
    assert parse_qs(urlsplit(body["previous"]).query)["offset"] == ["3"]


def test_the_total_counts_only_what_the_filter_matches(authed_api: APIClient, syncs: list[int]) -> None:
    record(action="validate_config", resource="config", user="service", success=True, details={})
    assert page(authed_api, "/audit/logs?action=validate_config")["total"] == 1
    assert page(authed_api, "/audit/logs?secret=s4")["total"] == 1


def test_jobs_page_with_a_total_and_links(authed_api: APIClient, db: None) -> None:
    body = page(authed_api, "/jobs?limit=5")
    assert (body["total"], body["next"], body["previous"]) == (0, None, None)


def test_deliveries_page_with_a_total_and_links(authed_api: APIClient, settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True
    hook = endpoint("http://127.0.0.1:9/hook")
    outbox.enqueue([("rotation.completed", {"rotated": [f"s{i}"]}) for i in range(3)], actor="t", audit_row=1)
    body = page(authed_api, f"/webhooks/{hook.pk}/deliveries?limit=2")
    assert (body["count"], body["total"]) == (2, 3)
    assert parse_qs(urlsplit(body["next"]).query)["offset"] == ["2"]
