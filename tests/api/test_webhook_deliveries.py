"""GET /webhooks/{id}/deliveries: an endpoint's deliveries with every attempt, newest first."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import named_key
from tests.peers.webhook_receiver import webhook_receiver
from tests.webhooks.support import SECRET, endpoint
from webhooks import outbox
from webhooks.delivery import deliver_due
from webhooks.models import Endpoint


@pytest.fixture(autouse=True)
def _private_allowed(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True


def events(n: int) -> None:
    for i in range(n):
        outbox.enqueue([("sync.completed", {"generated": [f"s{i}"]})], actor="t", audit_row=i,
                       at=timezone.now() + timedelta(microseconds=i))


@pytest.mark.server
def test_deliveries_are_listed_newest_first_with_every_attempt(authed_api: APIClient) -> None:
    with webhook_receiver() as receiver:
        hook = endpoint(receiver.url)
        events(2)
        receiver.statuses = [500]
        now = timezone.now() + timedelta(seconds=1)
        deliver_due(now)
        deliver_due(now + timedelta(hours=1))
    body = authed_api.get(f"/webhooks/{hook.pk}/deliveries").json()
    assert (body["count"], body["page"], body["per_page"]) == (2, 1, 50)
    newest, oldest = body["deliveries"]
    assert newest["payload"]["data"] == {"generated": ["s1"]}
    assert [a["status"] for a in oldest["attempt_log"]] == [500, 204]
    assert oldest["state"] == "delivered" and oldest["attempts"] == 2
    assert [a["status"] for a in newest["attempt_log"]] == [204]


def test_deliveries_are_paginated_by_limit_and_offset(authed_api: APIClient) -> None:
    hook = endpoint("http://127.0.0.1:9/")
    events(5)
    body = authed_api.get(f"/webhooks/{hook.pk}/deliveries?limit=2&offset=2").json()
    assert [d["payload"]["data"]["generated"] for d in body["deliveries"]] == [["s2"], ["s1"]]
    assert (body["count"], body["page"], body["per_page"]) == (2, 2, 2)


def test_deliveries_are_filtered_by_state(authed_api: APIClient) -> None:
    hook = endpoint("http://127.0.0.1:9/")
    events(2)
    assert authed_api.get(f"/webhooks/{hook.pk}/deliveries?state=delivered").json()["count"] == 0
    assert authed_api.get(f"/webhooks/{hook.pk}/deliveries?state=pending").json()["count"] == 2


def test_only_the_endpoints_own_deliveries_are_listed(authed_api: APIClient) -> None:
    hook = endpoint("http://127.0.0.1:9/", "drift.detected")
    endpoint("http://127.0.0.1:9/", "sync.completed")
    events(1)
    assert authed_api.get(f"/webhooks/{hook.pk}/deliveries").json()["count"] == 0


def test_the_endpoints_secret_is_never_in_the_answer(authed_api: APIClient) -> None:
    hook = endpoint("http://127.0.0.1:9/")
    events(1)
    assert SECRET not in authed_api.get(f"/webhooks/{hook.pk}/deliveries").content.decode()


@pytest.mark.parametrize("query", ["limit=0", "limit=1001", "offset=-1", "state=lost", "state=", "page=2"])
def test_a_bad_query_parameter_is_422_with_the_error_body(authed_api: APIClient, query: str) -> None:
    hook = endpoint("http://127.0.0.1:9/")
    response = authed_api.get(f"/webhooks/{hook.pk}/deliveries?{query}")
    assert response.status_code == 422
    assert set(response.json()) == {"error", "detail", "timestamp"}


@pytest.mark.parametrize("webhook_id", ["999", "abc", "1e3", "99999999999999999999999"])
def test_an_unknown_webhook_is_404_with_the_error_body(authed_api: APIClient, webhook_id: str) -> None:
    response = authed_api.get(f"/webhooks/{webhook_id}/deliveries")
    assert response.status_code == 404
    assert set(response.json()) == {"error", "detail", "timestamp"}


def test_reading_deliveries_is_audited(authed_api: APIClient) -> None:
    hook = endpoint("http://127.0.0.1:9/")
    events(1)
    authed_api.get(f"/webhooks/{hook.pk}/deliveries?limit=5")
    row = AuditEntry.objects.get(action="read_webhook_deliveries")
    assert (row.resource, row.success, row.details) == (f"webhook:{hook.pk}", True,
                                                        {"limit": 5, "offset": 0, "returned": 1})


def test_a_key_with_the_audit_scope_reads_deliveries_and_one_without_it_is_refused(db: None) -> None:
    hook = endpoint("http://127.0.0.1:9/")
    for scopes, status in ((("audit",), 200), (("read", "write", "metrics"), 403)):
        client = APIClient()
        client.credentials(HTTP_X_API_KEY=named_key("-".join(scopes), *scopes))
        assert client.get(f"/webhooks/{hook.pk}/deliveries").status_code == status


def test_without_a_key_it_is_401(api: APIClient) -> None:
    hook = Endpoint.objects.create(url="http://127.0.0.1:9/", events=["sync.completed"], secret=SECRET)
    assert api.get(f"/webhooks/{hook.pk}/deliveries").status_code == 401
