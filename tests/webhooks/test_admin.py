"""Endpoints, deliveries and attempts in the admin: read-only, never an endpoint's secret."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from secretsapi.admin.audit import ACTIONS
from tests.factories import LOCAL_HOST
from tests.webhooks.support import SECRET, endpoint
from webhooks import outbox
from webhooks.models import Attempt, Delivery

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def admin_client(db: None) -> Client:
    client = Client(HTTP_HOST=LOCAL_HOST)
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-for-tests"))
    return client


@pytest.fixture
def delivery(db: None) -> Delivery:
    endpoint("http://127.0.0.1:9/hook")
    outbox.enqueue([("sync.completed", {"generated": ["db"]})], actor="t", audit_row=1)
    row = Delivery.objects.get()
    Attempt.objects.create(delivery=row, at=timezone.now(), status=503, error="answered 503", duration_ms=12)
    return row


def test_a_delivery_page_shows_every_attempt(admin_client: Client, delivery: Delivery) -> None:
    response = admin_client.get(f"/admin/webhooks/delivery/{delivery.pk}/change/")
    assert response.status_code == 200
    assert b"answered 503" in response.content


@pytest.mark.parametrize("model", ["endpoint", "delivery", "attempt"])
def test_every_page_is_read_only_and_never_shows_the_secret(admin_client: Client, delivery: Delivery,
                                                            model: str) -> None:
    listing = admin_client.get(f"/admin/webhooks/{model}/")
    assert listing.status_code == 200
    assert admin_client.get(f"/admin/webhooks/{model}/add/").status_code == 403
    pk = {"endpoint": delivery.endpoint_id, "delivery": delivery.pk, "attempt": Attempt.objects.get().pk}[model]
    page = admin_client.get(f"/admin/webhooks/{model}/{pk}/change/")
    assert SECRET.encode() not in listing.content + page.content
    assert admin_client.post(f"/admin/webhooks/{model}/{pk}/delete/", {"post": "yes"}).status_code == 403


def test_every_webhook_and_metrics_action_is_in_the_audit_admins_list() -> None:
    source = "".join((ROOT / "secretsapi/actions" / name).read_text() for name in ("webhooks.py", "metrics.py"))
    written = set(re.findall(r'audited\(\s*"([a-z_]+)"', source))
    written |= set(re.findall(r'action = "([a-z_]+)" if enabled else "([a-z_]+)"', source)[0])
    assert written <= set(ACTIONS)
    assert {"add_webhook", "enable_webhook", "disable_webhook"} <= written
