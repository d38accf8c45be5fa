"""Admin for API keys: the list (never a key or a hash), creating a key (shown once), and revoke as
an action. Creating and revoking go through ``apikeys.keys``, which writes their audit rows."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

import secretsapi.admin.display as display
from apikeys import keys
from apikeys.models import ApiKey
from apikeys.scopes import SCOPES
from audit.actors import admin_actor


class ApiKeyCreateForm(forms.Form):
    """What ``manage.py apikey create`` asks for; the rules (name, reserved names, scopes) are
    ``keys.create``'s, its refusal shown as the form's error."""

    name = forms.CharField(max_length=100,
                           help_text="Letters, digits and . _ : @ -; the audit rows name the key by it.")
    scopes = forms.MultipleChoiceField(choices=[(s, s) for s in SCOPES], widget=forms.CheckboxSelectMultiple)
    expires_in = forms.CharField(required=False, label="Expires in",
                                 help_text="e.g. 90d, 24h, 30min, 6mo; empty: never.")
    projects = forms.CharField(required=False, label="Projects",
                               help_text="PROJECT or PROJECT:ENVIRONMENT, comma-separated; empty: every project.")

    def clean_projects(self) -> Any:
        items = [item.strip() for item in self.cleaned_data["projects"].split(",") if item.strip()]
        try:
            return keys.parse_projects(items)
        except keys.KeyRefused as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_expires_in(self) -> Any:
        text = self.cleaned_data["expires_in"].strip()
        try:
            return keys.parse_duration(text) if text else None
        except keys.KeyRefused as exc:
            raise forms.ValidationError(str(exc)) from None


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "scope_labels", "project_limits", "created_at", "expires_at", "last_used_at",
                    "revoked_at")
    fields = list_display
    readonly_fields = list_display
    search_fields = ("name",)
    actions = ("revoke",)

    @admin.display(description="scopes")
    def scope_labels(self, obj: ApiKey) -> SafeString:
        return format_html_join(" ", '<span class="scope-label">{}</span>', ((s,) for s in obj.scopes))

    @admin.display(description="projects")
    def project_limits(self, obj: ApiKey) -> str:
        return keys.describe_limits(keys.limits_of(obj.projects))

    @admin.display(description="created", ordering="created")
    def created_at(self, obj: ApiKey) -> str:
        return display.when(obj.created)

    @admin.display(description="expires", ordering="expires")
    def expires_at(self, obj: ApiKey) -> str:
        return display.when(obj.expires) if obj.expires else "never"

    @admin.display(description="last used", ordering="last_used")
    def last_used_at(self, obj: ApiKey) -> str:
        return display.when(obj.last_used) if obj.last_used else "never"

    @admin.display(description="revoked", ordering="revoked")
    def revoked_at(self, obj: ApiKey) -> str:
        return display.when(obj.revoked) if obj.revoked else "no"

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
                 ) -> HttpResponse:
        """The creation form; on success, the key, once."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = ApiKeyCreateForm(request.POST if request.method == "POST" else None)
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "title": "Create an API key"}
        if form.is_bound and form.is_valid():
            try:
                issued = keys.create(form.cleaned_data["name"], form.cleaned_data["scopes"],
                                     form.cleaned_data["expires_in"], actor=admin_actor(request.user.get_username()),
                                     projects=form.cleaned_data["projects"])
            except keys.KeyRefused as exc:
                form.add_error(None, str(exc))
            else:
                # The admin's views are never cached (no-store): the key stays on this one page.
                return TemplateResponse(request, "admin/apikeys/apikey/issued.html",
                                        {**context, "title": "API key created", "issued": issued})
        return TemplateResponse(request, "admin/apikeys/apikey/create.html", {**context, "form": form})

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

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
