"""Deliveries are signed as Standard Webhooks specifies, checked by the standard's own library
(``standardwebhooks``), as a receiver would: the generated secret as it is shown, an operator's
own secret as its bytes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from secretsapi.actions.webhooks import new_secret
from tests.peers.webhook_receiver import Receiver, webhook_receiver
from tests.webhooks.support import SECRET, endpoint
from webhooks import outbox
from webhooks.delivery import deliver_due
from webhooks.models import Delivery


@pytest.fixture(autouse=True)
def _private_allowed(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True


@pytest.fixture
def receiver(db: None) -> Any:
    with webhook_receiver() as found:
        yield found


def delivered(receiver: Receiver, secret: str) -> Any:
    endpoint(receiver.url, secret=secret)
    outbox.enqueue([("rotation.completed", {"rotated": ["db"], "written_targets": {}})], actor="t", audit_row=3)
    deliver_due()
    return receiver.received[0]


def test_a_generated_secret_is_in_the_standard_form() -> None:
    secret = new_secret()
    assert secret.startswith("whsec_")
    Webhook(secret)  # the library reads it as it is shown


@pytest.mark.server
def test_the_library_verifies_a_delivery_with_the_generated_secret_as_shown(receiver: Receiver) -> None:
    secret = new_secret()
    got = delivered(receiver, secret)
    payload = Webhook(secret).verify(got.body, got.headers)
    assert payload["data"] == {"rotated": ["db"], "written_targets": {}}


@pytest.mark.server
def test_the_library_verifies_an_operators_own_secret_taken_as_bytes(receiver: Receiver) -> None:
    got = delivered(receiver, SECRET)
    assert Webhook(SECRET.encode()).verify(got.body, got.headers)["event"] == "rotation.completed"


@pytest.mark.server
def test_the_message_id_is_the_events_and_stays_the_same_on_a_retry(receiver: Receiver) -> None:
    got = delivered(receiver, SECRET)
    row = Delivery.objects.get()
    assert got.headers["webhook-id"] == row.payload["id"]


@pytest.mark.server
def test_the_library_refuses_another_secret_and_a_changed_body(receiver: Receiver) -> None:
    secret = new_secret()
    got = delivered(receiver, secret)
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(got.body, got.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(got.body.replace(b"db", b"dc"), got.headers)


def docs_verifier() -> Any:
    """``event_of`` exactly as docs/api.md prints it."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    block = re.search(r"```python\n(from standardwebhooks.*?)```", text, re.S)
    assert block is not None
    namespace: dict[str, Any] = {}
    exec(block.group(1), namespace)  # noqa: S102 - the docs' own snippet, tested verbatim
    return namespace["event_of"]


@pytest.mark.server
def test_the_docs_snippet_verifies_a_generated_and_an_own_secret_and_refuses_a_wrong_one(receiver: Receiver) -> None:
    event_of = docs_verifier()
    generated = new_secret()
    got = delivered(receiver, generated)
    assert event_of(generated, got.headers, got.body)["data"]["rotated"] == ["db"]
    assert event_of(new_secret(), got.headers, got.body) is None
    assert event_of(SECRET, got.headers, got.body) is None
