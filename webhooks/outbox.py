"""Writing events into the outbox: one delivery row per enabled endpoint that asked for the event.

Called inside the transaction that writes the operation's audit row (``secretsapi.actions``),
so an event exists exactly when its row does; ``webhooks.delivery`` sends it afterwards: a
worker at once (a task queued when the transaction commits), and every minute what is due.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django_q.tasks import async_task

from webhooks.models import Delivery, Endpoint

# The task a worker runs to send what is due.
DELIVER = "webhooks.delivery.deliver_due"


def enqueue(events: Sequence[tuple[str, dict[str, Any]]], *, actor: str | None, audit_row: int | None,
            at: datetime | None = None) -> int:
    """Write the deliveries of ``events``; returns how many rows were written."""
    if not events:
        return 0
    at = at or timezone.now()
    endpoints = list(Endpoint.objects.filter(enabled=True).only("id", "events"))
    rows = []
    for event, data in events:
        payload = {"id": str(uuid.uuid4()), "event": event, "created_at": at.isoformat(), "actor": actor,
                   "audit_id": audit_row, "data": data}
        rows += [Delivery(endpoint_id=e.pk, event=event, payload=payload, next_attempt_at=at, created_at=at,
                          updated_at=at) for e in endpoints if event in e.events]
    Delivery.objects.bulk_create(rows)
    if rows:
        # Sent at once by a worker; the worker's minute schedule (jobs.schedules) retries.
        transaction.on_commit(lambda: async_task(DELIVER))
    return len(rows)
