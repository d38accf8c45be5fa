"""Signed webhooks delivered from a durable outbox."""

from __future__ import annotations

from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from audit import listeners
        from webhooks import listener

        # Told every operation's outcome as its audit row is written, in the row's transaction.
        listeners.listen(listener.outcome_written)
