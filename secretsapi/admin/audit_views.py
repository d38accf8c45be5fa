"""The admin's secrets overview and charts pages: thin views over ``actions``, audited like the rest."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.contrib.admin import AdminSite
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

import secretsapi.admin.charts as charts
import secretsapi.admin.display as display
from audit.actors import admin_actor
from projects import current as current_project
from projects import registry as project_registry
from projects.current import DEFAULT
from secretsapi.actions import auditlog, overview, secret_reads, workspaces
from secretsapi.service.errors import ServiceError

PAGE_SIZE = 200
CHART_DAYS = 30
# The due-date chart's buckets: (label, days from now up to which a due date falls in it).
DUE_BUCKETS: tuple[tuple[str, int], ...] = (
    ("overdue", 0), ("in 7 days", 7), ("8-30 days", 30), ("31-90 days", 90), ("later", 10**6))
NEVER_DUE = "never due"
YES_NO = {"yes": True, "no": False}


# Both pages tell what the audit log tells (who rotated what, which secret drifted): they ask
# for the permission to view audit rows, not only for a staff login.
AUDIT_PERMISSION = "audit.view_auditentry"


def _allowed(request: HttpRequest) -> None:
    if not request.user.has_perm(AUDIT_PERMISSION):
        raise PermissionDenied


class SecretsOverview:
    """Every secret with its kind, targets, rotation dates and last drift result; filterable by
    ``overdue`` (yes/no), ``kind`` and ``drift`` (a result), paginated."""

    def __init__(self, site: AdminSite) -> None:
        self.site = site

    def view(self, request: HttpRequest) -> HttpResponse:
        _allowed(request)
        context: dict[str, Any] = {**self.site.each_context(request), "title": "Secrets overview"}
        project = request.GET.get("project") or DEFAULT
        try:
            found = project_registry.find(project)
            with current_project.using(None if found.is_default else found):
                rows = secret_reads.secrets_overview(workspaces.workspace(),
                                                     actor=admin_actor(request.user.get_username()))
        except ServiceError as exc:
            return TemplateResponse(request, "admin/audit/secrets_overview.html",
                                    {**context, "error": f"{exc.code}: {exc.message}"})
        chosen = {key: request.GET.get(key, "") for key in ("overdue", "kind", "drift", "project")}
        shown = [row for row in rows if _matches(row, chosen)]
        page = Paginator(shown, PAGE_SIZE).get_page(request.GET.get("p"))
        context.update(
            rows=[_cells(row) for row in page.object_list], page=page, total=len(rows), matching=len(shown),
            filters=[_project_filter(project), *_filters(rows, chosen)],
            query=urlencode({k: v for k, v in chosen.items() if v}),
            now=display.when(timezone.now()),
        )
        return TemplateResponse(request, "admin/audit/secrets_overview.html", context)


def _matches(row: overview.SecretOverview, chosen: dict[str, str]) -> bool:
    overdue = YES_NO.get(chosen["overdue"])
    return ((overdue is None or row.overdue == overdue)
            and (not chosen["kind"] or row.kind == chosen["kind"])
            and (not chosen["drift"] or row.drift.result == chosen["drift"]))


def _cells(row: overview.SecretOverview) -> dict[str, Any]:
    return {
        "name": row.name, "kind": row.kind, "targets": row.targets,
        "state": "generated" if row.generated else "not generated",
        "last_rotated": display.when(row.last_rotated) if row.last_rotated else ("never" if row.generated else "-"),
        "due_at": display.when(row.due_at) if row.due_at else "never", "overdue": row.overdue,
        "drift": row.drift.result, "drift_checked": display.when(row.drift.checked_at) if row.drift.checked_at else "",
        "audit_link": urlencode({"secret": row.name}),
    }


def _project_filter(project: str) -> dict[str, Any]:
    """The service's projects, each a link to its secrets (the other filters dropped: they name
    kinds and results of the project shown)."""
    return {"title": "project", "choices": [{"label": name, "selected": name == project,
                                             "query": urlencode({"project": name})}
                                            for name in project_registry.project_names()]}


def _filters(rows: Sequence[overview.SecretOverview], chosen: dict[str, str]) -> list[dict[str, Any]]:
    """Each filter's title and choices, each choice a link keeping the other filters."""
    kinds = sorted({row.kind for row in rows})
    drift = [overview.DRIFTED, overview.CLEAN, overview.UNREADABLE, overview.NOT_CHECKED]
    found = []
    for key, title, values in (("overdue", "overdue", ["yes", "no"]), ("kind", "kind", kinds),
                               ("drift", "last drift check", drift)):
        choices = [{"label": "All", "query": urlencode({k: v for k, v in chosen.items() if v and k != key}),
                    "selected": not chosen[key]}]
        choices += [{"label": value, "selected": chosen[key] == value,
                     "query": urlencode({**{k: v for k, v in chosen.items() if v}, key: value})} for value in values]
        found.append({"title": title, "choices": choices})
    return found


class Charts:
    """Operations per day by outcome and rotations per day over 30 days, and secrets by due date."""

    def __init__(self, site: AdminSite) -> None:
        self.site = site

    def view(self, request: HttpRequest) -> HttpResponse:
        _allowed(request)
        actor = admin_actor(request.user.get_username())
        context: dict[str, Any] = {**self.site.each_context(request), "title": "Charts"}
        activity = auditlog.audit_activity(actor=actor, days=CHART_DAYS)
        labels = [day.day.strftime("%m-%d") for day in activity.operations]
        context["operations"] = charts.bar_chart(
            "operations", f"Operations per day by outcome, last {CHART_DAYS} days", x_label="day (month-day, UTC)",
            y_label="audit rows", labels=labels, every_nth_label=3, series=[
                charts.Series("succeeded", charts.OK_COLOUR, [d.ok for d in activity.operations]),
                charts.Series("drift found (warning)", charts.WARNING_COLOUR, [d.drift for d in activity.operations]),
                charts.Series("failed", charts.FAILED_COLOUR, [d.failed for d in activity.operations])])
        context["rotations"] = charts.bar_chart(
            "rotations", f"Secrets rotated and failed rotations per day, last {CHART_DAYS} days",
            x_label="day (month-day, UTC)", y_label="secrets", labels=labels, every_nth_label=3, series=[
                charts.Series("rotated", charts.OK_COLOUR, [d.ok for d in activity.rotations]),
                charts.Series("failed", charts.FAILED_COLOUR, [d.failed for d in activity.rotations])])
        try:
            rows = secret_reads.secrets_overview(workspaces.workspace(), actor=actor)
        except ServiceError as exc:
            context["due_error"] = f"{exc.code}: {exc.message}"
        else:
            buckets = due_buckets(rows, timezone.now())
            context["due"] = charts.bar_chart(
                "due", "Secrets by next rotation due date", x_label="due", y_label="secrets",
                labels=list(buckets), series=[charts.Series("secrets", charts.NEUTRAL_COLOUR, list(buckets.values()))])
        return TemplateResponse(request, "admin/audit/charts.html", context)


def due_buckets(rows: Sequence[overview.SecretOverview], now: datetime) -> dict[str, int]:
    counts = dict.fromkeys([label for label, _ in DUE_BUCKETS] + [NEVER_DUE], 0)
    for row in rows:
        if row.due_at is None:
            counts[NEVER_DUE] += 1
            continue
        left = row.due_at - now
        label = next(label for label, days in DUE_BUCKETS if left <= timedelta(days=days))
        counts[label] += 1
    return counts
