"""Jobs in the admin, read-only: the task engine's rows, shown as jobs (never their requests).

django-tasks-db's own page for them (read-only too) shows each row's arguments, where a job's
request waits (a definition sent for validation may hold values): it is replaced by this one.
"""

from __future__ import annotations

from typing import Any

import django_tasks_db.admin  # noqa: F401 - the engine's page, registered before it is replaced below
from django.contrib import admin
from django_tasks_db.models import DBTaskResult

from jobs.queue import record_of
from secretsapi.admin.read_only import ReadOnlyAdmin

# The admin's discovery reaches the engine's module after this app's: imported above, its page is
# registered first, so it is replaced whatever the order of the apps.
if admin.site.is_registered(DBTaskResult):
    admin.site.unregister(DBTaskResult)


@admin.register(DBTaskResult)
class JobAdmin(ReadOnlyAdmin):
    list_display = ("enqueued_at", "operation", "project", "state", "actor", "queue_name", "finished_at")
    list_filter = ("status", "queue_name")
    search_fields = ("=id",)
    date_hierarchy = "enqueued_at"
    fields = ("id", "operation", "project", "state", "actor", "params", "queue_name", "enqueued_at", "started_at",
              "finished_at", "worker_ids", "outcome")
    readonly_fields = fields

    @admin.display(description="operation")
    def operation(self, row: DBTaskResult[..., Any]) -> str:
        return record_of(row).operation

    @admin.display(description="project")
    def project(self, row: DBTaskResult[..., Any]) -> str:
        return record_of(row).project

    @admin.display(description="state")
    def state(self, row: DBTaskResult[..., Any]) -> str:
        return record_of(row).state

    @admin.display(description="actor")
    def actor(self, row: DBTaskResult[..., Any]) -> str:
        return record_of(row).actor or "-"

    @admin.display(description="params")
    def params(self, row: DBTaskResult[..., Any]) -> dict[str, object]:
        return record_of(row).params

    @admin.display(description="outcome")
    def outcome(self, row: DBTaskResult[..., Any]) -> object:
        found = record_of(row)
        return found.failure or ("result stored" if found.result is not None else "-")
