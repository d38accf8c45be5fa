"""Projects in the admin, read-only: ``manage.py project`` and ``POST /projects`` add and remove
them (each change audited); the default project (SERVICE_CONFIG's) is no row."""

from __future__ import annotations

from django.contrib import admin

import secretsapi.admin.display as display
from projects.models import Project
from secretsapi.admin.read_only import ReadOnlyAdmin


@admin.register(Project)
class ProjectAdmin(ReadOnlyAdmin):
    list_display = ("name", "definition", "created_at")
    fields = list_display
    readonly_fields = list_display
    search_fields = ("name", "definition")

    @admin.display(description="created", ordering="created")
    def created_at(self, obj: Project) -> str:
        return display.when(obj.created)
