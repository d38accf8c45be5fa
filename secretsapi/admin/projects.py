"""Projects in the admin, read-only: ``manage.py project`` and ``POST /projects`` add and remove
them (each change audited); the default project (SERVICE_CONFIG's) is no row."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

import secretsapi.admin.display as display
from projects.models import Project


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "definition", "created_at")
    fields = list_display
    readonly_fields = list_display
    search_fields = ("name", "definition")

    @admin.display(description="created", ordering="created")
    def created_at(self, obj: Project) -> str:
        return display.when(obj.created)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
