"""The admin's user pages, with the reserved-name check on adding and on renaming a user."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import User
from django.http import HttpRequest

from adminusers import audit
from adminusers.names import check_username
from audit.actors import admin_actor


class CheckedUserCreationForm(AdminUserCreationForm):
    def clean_username(self) -> Any:
        username = super().clean_username()
        if username:
            check_username(username)
        return username


class CheckedUserChangeForm(UserChangeForm):  # type: ignore[type-arg]
    def clean_username(self) -> Any:
        username = self.cleaned_data.get("username")
        if username:
            check_username(username)
        return username


# Django's own UserAdmin, with the two forms above; registered in place of the default one.
admin.site.unregister(User)


@admin.register(User)
class CheckedUserAdmin(UserAdmin):  # type: ignore[type-arg]
    """Every account added, changed (its password apart), or deleted here is an audit row too,
    beside the admin's own history (``LogEntry``), through its documented ``log_*`` hooks."""

    add_form = CheckedUserCreationForm
    form = CheckedUserChangeForm

    def log_addition(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        audit.account_changed(audit.CREATE, obj.get_username(), actor=_actor(request), via="admin",
                              staff=obj.is_staff, superuser=obj.is_superuser)
        return super().log_addition(request, obj, message)

    def log_change(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        # The password page is the only one that changes a password (the change form shows its hash read-only).
        password = request.path.rstrip("/").endswith("/password")
        audit.account_changed(audit.PASSWORD if password else audit.CHANGE, obj.get_username(),
                              actor=_actor(request), via="admin",
                              fields=None if password else audit.changed_fields(message))
        return super().log_change(request, obj, message)

    def log_deletions(self, request: HttpRequest, queryset: Any) -> Any:
        for obj in queryset:
            audit.account_changed(audit.DELETE, obj.get_username(), actor=_actor(request), via="admin")
        return super().log_deletions(request, queryset)


def _actor(request: HttpRequest) -> str:
    return admin_actor(str(request.user.get_username()))
