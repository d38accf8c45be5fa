"""Read-only admin for audit rows: list, filter, search, drill down by date; nothing else."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from apikeys.models import ApiKey
from audit.models import AuditEntry

# Every action a row can name (a test compares it with actions.py). A fixed list: asking the
# table for its distinct values would scan a million rows on every page.
ACTIONS = (
    "admin_lockout", "admin_login", "agent_sync", "apikey_create", "apikey_revoke", "apikey_rotate", "authenticate",
    "check_drift", "check_policy", "check_rotation",
    "execute_rotation", "get_secret_status", "list_generators", "list_providers", "list_secret_types",
    "list_secrets", "list_targets", "read_audit_logs", "read_secret_value", "render_config",
    "request_refused", "sync", "validate_config",
    # webhooks/actions.py and metrics/collector.py
    "add_webhook", "deliver_webhooks", "disable_webhook", "enable_webhook", "list_webhooks", "read_metrics",
    "read_webhook_deliveries", "remove_webhook",
)


class ActionFilter(admin.SimpleListFilter):
    title = "action"
    parameter_name = "action"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(action, action) for action in ACTIONS]

    def queryset(self, request: HttpRequest, queryset: QuerySet[AuditEntry]) -> QuerySet[AuditEntry]:
        return queryset.filter(action=self.value()) if self.value() else queryset


class UserKindFilter(admin.SimpleListFilter):
    """Who acted: the environment's key, each named API key, or a kind of user. Other users are
    unbounded (a failed login names whatever was typed): the search box, or ``?user=<name>``."""

    title = "user"
    parameter_name = "by"
    KINDS: dict[str, tuple[str, dict[str, Any]]] = {  # noqa: RUF012 - a constant table
        "service": ("the SERVICE_API_KEY key (service)", {"user": "service"}),
        "cli": ("command line (cli:*)", {"user__startswith": "cli:"}),
        "nobody": ("nobody (insecure mode)", {"user__isnull": True}),
        "admin": ("admin site users (admin:*)", {"user__startswith": "admin:"}),
    }

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        named = [(f"key:{name}", f"API key {name}") for name in ApiKey.objects.values_list("name", flat=True)]
        return [*((key, label) for key, (label, _) in self.KINDS.items()), *named]

    def queryset(self, request: HttpRequest, queryset: QuerySet[AuditEntry]) -> QuerySet[AuditEntry]:
        value = self.value() or ""
        if value.startswith("key:"):
            return queryset.filter(user=value.removeprefix("key:"))
        kind = self.KINDS.get(value)
        return queryset.filter(**kind[1]) if kind else queryset


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("timestamp", "action", "resource", "user", "success", "attempts")
    list_filter = ("success", ActionFilter, UserKindFilter, ("timestamp", admin.DateFieldListFilter))
    search_fields = ("action", "resource", "user")
    date_hierarchy = "timestamp"
    readonly_fields = ("timestamp", "action", "resource", "user", "details", "success")
    # A page must not count the whole table.
    show_full_result_count = False

    @admin.display(description="attempts")
    def attempts(self, obj: AuditEntry) -> int:
        """How many attempts the row stands for: a tally's count (failed authentication), else 1."""
        count = obj.details.get("count") if obj.tally_key is not None and isinstance(obj.details, dict) else None
        return count if isinstance(count, int) else 1

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        # ``?user=<name>`` and ``?resource=<name>``: exact matches on indexed columns.
        return lookup in ("user", "resource") or super().lookup_allowed(lookup, value, request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
