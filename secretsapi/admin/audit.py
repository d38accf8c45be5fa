"""Read-only admin for audit rows: list, filter, search, drill down by date; and the secrets overview
and the charts pages, which read through ``actions`` like every other interface."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import URLPattern, path
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

import secretsapi.admin.audit_views as audit_views
import secretsapi.admin.display as display
from apikeys.models import ApiKey
from audit.models import AuditEntry, AuditMention
from audit.recorder import fit_name
from projects.registry import project_names
from secretsapi.admin.read_only import ReadOnlyAdmin

# Names shown in a row's "secrets" column; a bulk row names thousands, the filter finds them all.
SECRETS_SHOWN = 5

# Every action a row can name (a test compares it with secretsapi/actions/). A fixed list: asking the
# table for its distinct values would scan a million rows on every page.
ACTIONS = (
    "admin_lockout", "admin_login", "agent_sync", "apikey_create", "apikey_revoke", "apikey_rotate", "authenticate",
    "check_drift", "check_policy", "check_rotation", "clean_lockfile", "execute_rotation", "export_audit_logs",
    "get_secret_status", "get_secrets_status", "import_values", "list_generators", "list_providers",
    "list_secret_types", "list_secrets", "list_targets", "read_audit_activity", "read_audit_logs", "read_job",
    "read_jobs", "read_secret_value", "read_secrets_overview", "render_config", "request_refused", "sync",
    "validate_config",
    # secretsapi/actions/webhooks.py and secretsapi/actions/metrics.py
    "add_webhook", "deliver_webhooks", "disable_webhook", "enable_webhook", "list_webhooks", "read_metrics",
    "read_webhook", "read_webhook_deliveries", "remove_webhook",
    # adminusers/audit.py
    "admin_user_create", "admin_user_change", "admin_user_password", "admin_user_delete",
)


class ActionFilter(admin.SimpleListFilter):
    title = "action"
    parameter_name = "action"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(action, action) for action in ACTIONS]

    def queryset(self, request: HttpRequest, queryset: QuerySet[AuditEntry]) -> QuerySet[AuditEntry]:
        return queryset.filter(action=self.value()) if self.value() else queryset


class OutcomeFilter(admin.SimpleListFilter):
    """A row's outcome: ``drift`` (a finding), ``ok``, ``failed`` or ``started``."""

    title = "outcome"
    parameter_name = "outcome"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("ok", "ok"), ("drift", "drift found (warning)"), ("failed", "failed"), ("started", "started")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[AuditEntry]) -> QuerySet[AuditEntry]:
        value = self.value()
        if value == "ok":  # rows older than the column say ok by ``success`` alone
            return queryset.filter(success=True).exclude(outcome__in=display.WARNINGS)
        if value == "failed":
            return queryset.filter(success=False).exclude(outcome="started")
        return queryset.filter(outcome=value) if value else queryset


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


class SecretFilter(admin.SimpleListFilter):
    """``?secret=<name>``: the rows naming that secret, as the API's filter finds them (the
    mentions table: a bulk row's lists count, not only its resource). A box, since the names
    are unbounded."""

    title = "secret"
    parameter_name = "secret"
    template = "admin/audit/secret_filter.html"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        value = self.value()
        return [(value, value)] if value else []

    def has_output(self) -> bool:
        return True

    def queryset(self, request: HttpRequest, queryset: QuerySet[AuditEntry]) -> QuerySet[AuditEntry]:
        value = self.value()
        if not value:
            return queryset
        return queryset.filter(id__in=AuditMention.objects.filter(secret=fit_name(value)).values("entry_id"))


class ProjectFilter(admin.SimpleListFilter):
    """The service's projects (the default one and every one added), not the distinct values of
    the whole table: listing those would read every row."""

    title = "project"
    parameter_name = "project"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(name, name) for name in project_names()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[AuditEntry]) -> QuerySet[AuditEntry]:
        value = self.value()
        return queryset.filter(project=value) if value else queryset


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = ("when", "action", "resource", "secrets", "user", "result", "project_environment", "origin",
                    "attempts")
    list_filter = ("success", OutcomeFilter, ActionFilter, UserKindFilter, SecretFilter, ProjectFilter,
                   ("timestamp", admin.DateFieldListFilter))
    search_fields = ("action", "resource", "user", "project", "definition_project", "environment", "origin")
    date_hierarchy = "timestamp"
    fields = ("when", "action", "resource", "user", "result", "project", "definition_project", "definition",
              "environment", "origin", "secrets_named", "details_readable")
    readonly_fields = fields
    # A page must not count the whole table.
    show_full_result_count = False

    @admin.display(description="time", ordering="timestamp")
    def when(self, obj: AuditEntry) -> str:
        return display.when(obj.timestamp)

    # Not ``outcome``: the admin would show the model's column of that name instead.
    @admin.display(description="outcome", ordering="success")
    def result(self, obj: AuditEntry) -> SafeString:
        """A failure with its first error, a finding (drift) as a warning; both marked, not only coloured."""
        text = display.outcome(obj.success, obj.details, obj.outcome)
        if obj.success and obj.outcome in display.WARNINGS:
            return format_html('<span class="audit-warning" role="status">&#9888; {}</span>', text)
        if not obj.success:
            return format_html('<span class="audit-failed">&#10007; {}</span>', text)
        return format_html("{}", text)

    @admin.display(description="project / environment")
    def project_environment(self, obj: AuditEntry) -> str:
        return " / ".join(part for part in (obj.project, obj.definition_project, obj.environment) if part) or "-"

    @admin.display(description="secrets")
    def secrets(self, obj: AuditEntry) -> SafeString:
        """The first names the row mentions (by name: the order of the mentions' unique index, so a
        bulk row's thousands are not sorted for five), each a link to the rows naming it."""
        names = list(obj.mentions.order_by("secret").values_list("secret", flat=True)[: SECRETS_SHOWN + 1])
        links = format_html_join(", ", '<a href="?{}">{}</a>',
                                 ((urlencode({"secret": n}), n) for n in names[:SECRETS_SHOWN]))
        return format_html("{}{}", links, ", ..." if len(names) > SECRETS_SHOWN else "")

    @admin.display(description="secrets named")
    def secrets_named(self, obj: AuditEntry) -> SafeString:
        count = obj.mentions.count()
        names = list(obj.mentions.order_by("secret").values_list("secret", flat=True)[: display.LIST_SHOWN])
        return format_html("{} {}", count, display.details_html(names) if names else "")

    @admin.display(description="details")
    def details_readable(self, obj: AuditEntry) -> SafeString:
        return display.details_html(obj.details)

    @admin.display(description="attempts")
    def attempts(self, obj: AuditEntry) -> int:
        """How many attempts the row stands for: a tally's count (failed authentication), else 1."""
        count = obj.details.get("count") if obj.tally_key is not None and isinstance(obj.details, dict) else None
        return count if isinstance(count, int) else 1

    def get_urls(self) -> list[URLPattern]:
        pages = [
            path("secrets/", self.admin_site.admin_view(audit_views.SecretsOverview(self.admin_site).view),
                 name="audit_secrets_overview"),
            path("charts/", self.admin_site.admin_view(audit_views.Charts(self.admin_site).view),
                 name="audit_charts"),
        ]
        return [*pages, *super().get_urls()]

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        # ``?user=<name>`` and ``?resource=<name>``: exact matches on indexed columns.
        return lookup in ("user", "resource") or super().lookup_allowed(lookup, value, request)
