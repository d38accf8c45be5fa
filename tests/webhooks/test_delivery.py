"""Delivering the outbox: signed POSTs to a loopback receiver, retries on a clock the test controls."""

from __future__ import annotations

import json
import random
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.peers.webhook_receiver import Receiver, webhook_receiver
from tests.webhooks.support import SECRET, endpoint, readme_verifier
from webhooks import delivery, outbox
from webhooks.delivery import BACKOFF_CAP, RETRY_FOR, backoff, deliver_due
from webhooks.models import Attempt, Delivery


@pytest.fixture(autouse=True)
def _private_allowed(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True


@pytest.fixture
def receiver(db: None) -> Any:
    with webhook_receiver() as found:
        yield found


def queued(receiver: Receiver, event: str = "rotation.completed") -> Delivery:
    endpoint(receiver.url)
    outbox.enqueue([(event, {"rotated": ["db"], "written_targets": {}})], actor="scheduler", audit_row=7)
    return Delivery.objects.get()


@pytest.mark.server
def test_a_due_delivery_is_posted_once_and_marked_delivered(receiver: Receiver) -> None:
    row = queued(receiver)
    outcome = deliver_due()
    assert (outcome.delivered, outcome.retrying, outcome.failed) == (1, 0, 0)
    assert len(receiver.received) == 1
    row.refresh_from_db()
    assert (row.state, row.attempts, row.last_status) == ("delivered", 1, 204)
    assert deliver_due().delivered == 0
    assert len(receiver.received) == 1


@pytest.mark.server
def test_the_body_is_the_payload_and_the_headers_name_event_and_delivery(receiver: Receiver) -> None:
    row = queued(receiver)
    deliver_due()
    got = receiver.received[0]
    assert json.loads(got.body) == row.payload
    assert got.headers["Content-Type"] == "application/json"
    assert (got.headers["X-Webhook-Event"], got.headers["X-Webhook-Delivery"]) == ("rotation.completed", str(row.pk))


@pytest.mark.server
def test_the_readme_snippet_verifies_the_signature(receiver: Receiver) -> None:
    queued(receiver)
    deliver_due()
    got = receiver.received[0]
    verify = readme_verifier()
    assert verify(SECRET, got.headers["X-Signature"], got.body)


@pytest.mark.server
def test_the_readme_snippet_refuses_another_secret_a_changed_body_and_a_garbled_header(receiver: Receiver) -> None:
    queued(receiver)
    deliver_due()
    got = receiver.received[0]
    verify = readme_verifier()
    assert not verify("another-secret-0123456789", got.headers["X-Signature"], got.body)
    assert not verify(SECRET, got.headers["X-Signature"], got.body.replace(b"db", b"dc"))
    assert not verify(SECRET, "t=notanumber,v1=00", got.body)


@pytest.mark.server
def test_the_readme_snippet_refuses_a_signature_older_than_its_tolerance(receiver: Receiver) -> None:
    endpoint(receiver.url)
    then = timezone.now() - timedelta(minutes=10)
    outbox.enqueue([("rotation.completed", {"rotated": ["db"]})], actor="t", audit_row=1, at=then)
    deliver_due(then)
    got = receiver.received[0]
    assert not readme_verifier()(SECRET, got.headers["X-Signature"], got.body)


@pytest.mark.server
def test_a_failed_attempt_is_retried_after_a_backoff_and_then_delivered(receiver: Receiver) -> None:
    row = queued(receiver)
    receiver.statuses = [500]
    start = timezone.now()
    assert deliver_due(start).retrying == 1
    row.refresh_from_db()
    assert (row.state, row.attempts, row.last_status, row.last_error) == ("pending", 1, 500, "answered 500")
    wait = row.next_attempt_at - start
    assert timedelta(seconds=15) <= wait <= timedelta(seconds=30)
    assert deliver_due(start + wait - timedelta(seconds=1)).retrying == 0  # not due yet
    assert deliver_due(start + wait).delivered == 1
    assert list(Attempt.objects.order_by("at").values_list("status", flat=True)) == [500, 204]


def test_backoff_doubles_with_jitter_up_to_its_cap() -> None:
    rng = random.Random(5)
    waits = [backoff(n, rng) for n in range(1, 12)]
    for n, wait in enumerate(waits, start=1):
        ceiling = min(BACKOFF_CAP, delivery.BACKOFF_BASE * 2 ** (n - 1))
        assert ceiling / 2 <= wait <= ceiling
    assert waits[-1] > BACKOFF_CAP / 2


@pytest.mark.server
def test_a_delivery_failing_for_a_day_is_retried_all_day_then_marked_failed(receiver: Receiver) -> None:
    row = queued(receiver)
    receiver.statuses = [503] * 100
    now = row.created_at
    attempts = 0
    while attempts < 100:
        deliver_due(now)
        attempts += 1
        row.refresh_from_db()
        if row.state != "pending":
            break
        now = row.next_attempt_at
    assert row.state == "failed"
    assert now - row.created_at >= RETRY_FOR
    assert row.attempts == attempts == len(receiver.received)
    assert attempts > 24  # at most an hour apart
    assert Attempt.objects.filter(delivery=row).count() == attempts


@pytest.mark.server
def test_a_redirect_is_not_followed_and_counts_as_a_failure(receiver: Receiver) -> None:
    row = queued(receiver)
    receiver.statuses = [302]
    deliver_due()
    row.refresh_from_db()
    assert len(receiver.received) == 1
    assert (row.state, row.last_status) == ("pending", 302)
    assert "redirects are not followed" in row.last_error


@pytest.mark.server
def test_an_endpoint_that_does_not_answer_is_retried_with_the_reason(db: None) -> None:
    with webhook_receiver() as gone:
        url = gone.url
    endpoint(url)
    outbox.enqueue([("drift.detected", {"secrets": ["db"], "findings": 1})], actor="t", audit_row=1)
    deliver_due()
    row = Delivery.objects.get()
    assert (row.state, row.last_status, row.last_error) == ("pending", None, "no answer: ConnectionError")


@pytest.mark.server
def test_a_private_address_is_refused_at_delivery_time_once_no_longer_allowed(receiver: Receiver,
                                                                             settings: Any) -> None:
    row = queued(receiver)
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = False
    deliver_due()
    row.refresh_from_db()
    assert receiver.received == []
    assert row.state == "pending"
    assert "127.0.0.1" in row.last_error and "SERVICE_WEBHOOK_ALLOW_PRIVATE" in row.last_error


@pytest.mark.server
def test_a_delivery_leased_by_another_worker_is_not_sent_twice(receiver: Receiver) -> None:
    row = queued(receiver)
    now = timezone.now()
    # Another worker's lease: it moved the next attempt past its request's timeout.
    Delivery.objects.filter(pk=row.pk).update(next_attempt_at=now + timedelta(seconds=70))
    assert deliver_due(now) == delivery.Outcome()
    assert receiver.received == []
