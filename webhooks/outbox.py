"""Writing events into the outbox: one delivery row per enabled endpoint that asked for the event.

Called inside the transaction that writes the operation's audit row (``webhooks.listener``),
so an event exists exactly when its row does; ``webhooks.delivery`` sends it afterwards: a job
worker (``manage.py worker``) sends what is due every second, retries included.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from django.utils import timezone

from webhooks.models import Delivery, Endpoint

# Where the operation ran and came from, in every payload (null when unknown).
CONTEXT = ("project", "definition_project", "definition", "environment", "origin")


def enqueue(events: Sequence[tuple[str, dict[str, Any]]], *, actor: str | None, audit_row: int | None,
            at: datetime | None = None, context: Mapping[str, str | None] | None = None) -> int:
    """Write the deliveries of ``events``; returns how many rows were written. ``context``: where
    the operation ran and came from, as its audit row says (``project``, ``definition``,
    ``environment``, ``origin``; null when unknown)."""
    if not events:
        return 0
    at = at or timezone.now()
    endpoints = list(Endpoint.objects.filter(enabled=True).only("id", "events", "projects"))
    given = context or {}
    where = {name: given.get(name) or None for name in CONTEXT}
    rows = []
    for event, data in events:
        payload = {"id": str(uuid.uuid4()), "event": event, "created_at": at.isoformat(), "actor": actor,
                   "audit_id": audit_row, **where, "data": data}
        rows += [Delivery(endpoint_id=e.pk, event=event, payload=payload, next_attempt_at=at, created_at=at,
                          updated_at=at) for e in endpoints
                 if event in e.events and e.wants(where["project"])]
    Delivery.objects.bulk_create(rows)
    return len(rows)
