"""Jobs in the admin, read-only; django-q2's own pages are removed.

django-q2 registers its schedules, tasks and queue in the admin, where a staff user could
schedule any importable function (``os.system`` included). The schedules here come from the
settings only (jobs/schedules.py), so those pages go.
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django_q.models import Failure, OrmQ, Schedule, Success

from jobs.models import Job

for model in (Schedule, Success, Failure, OrmQ):
    if admin.site.is_registered(model):
        admin.site.unregister(model)


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("created_at", "operation", "state", "actor", "done", "total", "status_code", "finished_at")
    list_filter = ("state", "operation")
    search_fields = ("=id", "actor")
    date_hierarchy = "created_at"
    exclude = ("payload",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Job | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Job | None = None) -> bool:
        return False
