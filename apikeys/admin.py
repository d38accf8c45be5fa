"""Read-only admin for API keys: the list (never a key or a hash), and revoke as an action."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from apikeys import keys
from apikeys.models import ApiKey
from audit.actors import admin_actor


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "scopes", "created", "expires", "last_used", "revoked")
    fields = list_display
    readonly_fields = list_display
    search_fields = ("name",)
    actions = ("revoke",)

    # The admin is read-only (has_change_permission is False), so the action asks for the
    # model's change permission itself: viewing keys must not be enough to revoke them.
    @admin.action(description="Revoke the selected keys", permissions=["revoke"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        names = list(queryset.filter(revoked__isnull=True).values_list("name", flat=True))
        for name in names:  # one audited revocation each, as the command does
            keys.revoke(name, actor=admin_actor(request.user.get_username()))
        self.message_user(request, f"{len(names)} key(s) revoked.", messages.SUCCESS)

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("apikeys.change_apikey"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
