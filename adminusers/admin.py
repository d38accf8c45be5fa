"""The admin's user pages, with the reserved-name check on adding and on renaming a user."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import User

from adminusers.names import check_username


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
    add_form = CheckedUserCreationForm
    form = CheckedUserChangeForm
