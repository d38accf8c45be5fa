"""Endpoints, deliveries and attempts in the admin: read-only, and never an endpoint's secret."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from secretsapi.admin.read_only import ReadOnlyAdmin
from webhooks.models import Attempt, Delivery, Endpoint


@admin.register(Endpoint)
class EndpointAdmin(ReadOnlyAdmin):
    # The URL's query values (often a token) and credentials redacted; never the secret.
    list_display = ("id", "address", "project_names", "enabled", "created_at")
    fields = ("address", "events", "project_names", "enabled", "created_at")
    readonly_fields = ("address", "project_names")

    @admin.display(description="projects")
    def project_names(self, obj: Endpoint) -> str:
        return ", ".join(obj.projects) or "all"

    @admin.display(description="URL")
    def address(self, obj: Endpoint) -> str:
        return obj.shown_url


class AttemptInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Attempt
    fields = ("at", "status", "error", "duration_ms")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = ("id", "endpoint", "event", "state", "attempts", "next_attempt_at", "last_status", "created_at")
    list_filter = ("state", "event")
    date_hierarchy = "created_at"
    fields = ("endpoint", "event", "payload", "state", "attempts", "next_attempt_at", "last_status", "last_error",
              "created_at", "updated_at")
    inlines = (AttemptInline,)


@admin.register(Attempt)
class AttemptAdmin(ReadOnlyAdmin):
    list_display = ("id", "delivery", "at", "status", "error", "duration_ms")
    list_filter = ("status",)
    date_hierarchy = "at"
