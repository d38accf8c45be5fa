"""/webhooks and /webhooks/{id}: the endpoints managed through the API (scope ``webhooks``), as
``manage.py webhook`` manages them: a secret shown once, never listed; every call audited."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import named_key
from tests.peers.webhook_receiver import webhook_receiver
from tests.webhooks.support import endpoint, readme_verifier
from webhooks.delivery import deliver_due
from webhooks.models import EVENTS, Delivery, Endpoint
from webhooks.signing import HEADER

URL = "http://127.0.0.1:9/hook?token=t0p-s3cret-query"
ERROR_KEYS = {"error", "detail", "timestamp"}


@pytest.fixture(autouse=True)
def _private_allowed(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True  # the test's addresses are loopback


@pytest.fixture
def hooks_api(db: None) -> APIClient:
    """A named key with only the ``webhooks`` scope."""
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=named_key("terraform", "webhooks"))
    return client


def _create(client: APIClient, **body: Any) -> Any:
    return client.post("/webhooks", {"url": URL, **body}, format="json")


def test_create_generates_a_secret_shown_once_and_audits_without_it(hooks_api: APIClient) -> None:
    response = _create(hooks_api, events=["drift.detected", "rotation.failed"])
    assert response.status_code == 201, response.json()
    body = response.json()
    hook = Endpoint.objects.get()
    assert body["secret"] == hook.secret and len(body["secret"]) >= 32
    assert body["id"] == hook.pk and body["events"] == ["drift.detected", "rotation.failed"] and body["enabled"]
    assert "t0p-s3cret-query" not in body["url"]
    row = AuditEntry.objects.get(action="add_webhook")
    assert (row.user, row.success, row.details["webhook"]) == ("terraform", True, hook.pk)
    assert hook.secret not in json.dumps(list(AuditEntry.objects.values("details", "resource")))
    assert "t0p-s3cret-query" not in json.dumps(row.details)


def test_create_with_a_given_secret_answers_none_back(hooks_api: APIClient) -> None:
    response = _create(hooks_api, secret="whsec-given-by-terraform-0001")
    assert response.status_code == 201
    assert response.json()["secret"] is None
    assert Endpoint.objects.get().secret == "whsec-given-by-terraform-0001"
    assert response.json()["events"] == list(EVENTS)


def test_the_secret_is_never_listed_or_read_back(hooks_api: APIClient) -> None:
    secret = _create(hooks_api).json()["secret"]
    listing = hooks_api.get("/webhooks")
    hook_id = listing.json()["webhooks"][0]["id"]
    one = hooks_api.get(f"/webhooks/{hook_id}")
    assert listing.status_code == one.status_code == 200
    assert listing.json()["count"] == 1
    for response in (listing, one):
        assert secret not in response.content.decode() and "secret" not in response.content.decode()
    assert response["Cache-Control"] == "no-store"
    assert [r.action for r in AuditEntry.objects.order_by("id")][-2:] == ["list_webhooks", "read_webhook"]


def test_disable_and_enable_change_the_endpoint_and_are_audited(hooks_api: APIClient) -> None:
    hook_id = _create(hooks_api).json()["id"]
    off = hooks_api.patch(f"/webhooks/{hook_id}", {"enabled": False}, format="json")
    assert off.status_code == 200 and off.json()["enabled"] is False
    assert Endpoint.objects.get().enabled is False
    on = hooks_api.patch(f"/webhooks/{hook_id}", {"enabled": True}, format="json")
    assert on.json()["enabled"] is True
    assert [r.action for r in AuditEntry.objects.filter(resource=f"webhook:{hook_id}").order_by("id")] == [
        "disable_webhook", "enable_webhook"]


def test_delete_removes_the_endpoint_and_is_audited(hooks_api: APIClient) -> None:
    hook_id = _create(hooks_api).json()["id"]
    response = hooks_api.delete(f"/webhooks/{hook_id}")
    assert response.status_code == 204
    assert not Endpoint.objects.exists()
    assert AuditEntry.objects.get(action="remove_webhook").resource == f"webhook:{hook_id}"
    again = hooks_api.delete(f"/webhooks/{hook_id}")
    assert again.status_code == 404 and set(again.json()) == ERROR_KEYS


@pytest.mark.parametrize("path", ["/webhooks/999", "/webhooks/not-a-number", "/webhooks/" + "9" * 40])
def test_an_unknown_endpoint_is_404_with_the_error_body(hooks_api: APIClient, path: str) -> None:
    for response in (hooks_api.get(path), hooks_api.patch(path, {"enabled": False}, format="json"),
                     hooks_api.delete(path)):
        assert response.status_code == 404
        assert set(response.json()) == ERROR_KEYS


@pytest.mark.parametrize(("body", "names"), [
    ({"url": "http://127.0.0.1:9/x", "events": ["no.such"]}, "events"),
    ({"url": "http://127.0.0.1:9/x", "secret": "short"}, "secret"),
    ({"url": "http://127.0.0.1:9/x", "unknown": 1}, "unknown"),
    ({"url": 5}, "url"),
    ({}, "url"),
])
def test_a_bad_body_is_422_naming_the_field(hooks_api: APIClient, body: dict[str, Any], names: str) -> None:
    response = hooks_api.post("/webhooks", body, format="json")
    assert response.status_code == 422, response.json()
    assert set(response.json()) == ERROR_KEYS and names in response.json()["detail"]
    assert not Endpoint.objects.exists()


def test_a_refused_address_is_422_and_a_failed_audit_row(hooks_api: APIClient, settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = False
    response = hooks_api.post("/webhooks", {"url": "http://127.0.0.1:9/hook"}, format="json")
    assert response.status_code == 422 and set(response.json()) == ERROR_KEYS
    row = AuditEntry.objects.get(action="add_webhook")
    assert (row.success, row.details["error"]) == (False, "webhook_refused")


def test_an_update_needs_a_boolean(hooks_api: APIClient) -> None:
    hook_id = _create(hooks_api).json()["id"]
    for body in ({"enabled": "false"}, {}, {"enabled": False, "url": "http://127.0.0.1:9/other"}):
        response = hooks_api.patch(f"/webhooks/{hook_id}", body, format="json")
        assert response.status_code == 422 and set(response.json()) == ERROR_KEYS
    assert Endpoint.objects.get().enabled is True


@pytest.mark.parametrize("scope", ["read", "write", "audit", "metrics", "admin"])
def test_other_scopes_cannot_manage_webhooks(db: None, scope: str) -> None:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=named_key("k", scope))
    hook = endpoint("http://127.0.0.1:9/x")
    for response in (client.get("/webhooks"), _create(client), client.delete(f"/webhooks/{hook.pk}")):
        assert response.status_code == 403 and set(response.json()) == ERROR_KEYS
    assert Endpoint.objects.count() == 1


@pytest.mark.server
def test_an_endpoint_created_through_the_api_receives_signed_events(hooks_api: APIClient, authed_api: APIClient,
                                                                   project: Any, settings: Any) -> None:
    from tests.factories import definition, file_secret

    project.write(definition(file_secret("db", "out/a.env")))
    with webhook_receiver() as receiver:
        secret = hooks_api.post("/webhooks", {"url": receiver.url, "events": ["sync.completed"]},
                                format="json").json()["secret"]
        authed_api.post("/sync", {}, format="json")
        deliver_due()
        (received,) = receiver.received
    assert Delivery.objects.get().state == "delivered"
    assert readme_verifier()(secret, received.headers[HEADER], received.body)
