"""Read-only admin for audit rows: list, filter, search, drill down by date; nothing else."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from audit.models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("timestamp", "action", "resource", "user", "success")
    list_filter = ("action", "resource", "success")
    search_fields = ("action", "resource", "user")
    date_hierarchy = "timestamp"
    readonly_fields = ("timestamp", "action", "resource", "user", "details", "success")
    # A page must not count the whole table.
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
