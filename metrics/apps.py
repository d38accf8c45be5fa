"""The operation tallies and drift findings GET /metrics reads."""

from __future__ import annotations

from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "metrics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from audit import listeners
        from metrics import listener

        # Told every operation's outcome as its audit row is written, in the row's transaction.
        listeners.listen(listener.outcome_written)
