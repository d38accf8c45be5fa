"""``GET /metrics``: every figure computed from the database (and the definition) at scrape time.

Several gunicorn workers and several instances share one database, so any of them answers a
scrape with the same, complete figures; counters kept in a process's memory would give each
worker's share only (prometheus_client's multiprocess mode fixes that for one host, not for
several instances). Operations and their durations come from tallies written in the transaction
of each operation's audit row (``metrics.tally``: a scrape reads a few dozen rows, not the audit
log; bench/README.md has the figures); deliveries from the webhook outbox. Labels hold
operation names, outcomes, states, environments and projects only: never a secret's name, value
or hash. Every per-project figure carries a ``project`` label: a scrape shows the projects it is
given (``/projects/{name}/metrics`` one, a key limited to projects its own), else every project.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import DatabaseError
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from audit.models import AuditEntry
from jobs.queue import counts_by_state
from metrics import tally
from metrics.models import DriftCheck, OperationTally, ScrapeTally
from metrics.tally import BUCKETS
from projects import current as current_project
from projects import registry
from projects.current import DEFAULT, ProjectInfo
from projects.models import Project
from secretsapi import service
from secretsapi.actions import auditing, workspaces
from secretsapi.service.errors import ServiceError
from webhooks.models import Attempt, Delivery

SCHEDULER = "scheduler"
# The rotation check behind the due and overdue gauges reads a project's definition and lockfile:
# done at most once a minute per project and process, however often Prometheus scrapes. A scrape
# checks the projects whose figures are older (oldest first) for at most DUE_SCRAPE_SECONDS, at
# least one: the others show their older figures, with when they were checked, so a scrape of
# many projects on a busy host stays short (bench/README.md). Figures unread for DUE_KEEP go.
DUE_MAX_AGE = 60.0
DUE_SCRAPE_SECONDS = 1.0
DUE_KEEP = 3600.0
UNFINISHED_WINDOW = timedelta(days=1)


class DatabaseCollector(Collector):
    """``projects``: the projects shown (None: every one, and every project's counters, those of
    projects removed since included)."""

    def __init__(self, now: datetime | None = None, projects: Sequence[ProjectInfo] | None = None) -> None:
        self.now = now
        self.projects = projects

    def collect(self) -> Iterator[Metric]:
        now = self.now or timezone.now()
        shown = list(self.projects) if self.projects is not None else registry.all_projects()
        names = None if self.projects is None else _rows_of([project.name for project in shown])
        yield from _operations(now, names)
        yield from _due(shown)
        yield from _scheduled(now, shown)
        yield from _drift(shown)
        yield from _scrapes()
        yield from _deliveries()
        yield from _jobs()


def _rows_of(names: list[str]) -> list[str]:
    """The ``project`` values of these projects' rows: the default one's include rows that name
    none (written before projects, or outside any operation)."""
    return [*names, ""] if DEFAULT in names else names


def _operations(now: datetime, projects: list[str] | None) -> Iterator[Metric]:
    total = CounterMetricFamily("secretsapi_operations", "Operations ended, by outcome and project.",
                                labels=["operation", "outcome", "project"])
    histogram = HistogramMetricFamily("secretsapi_operation_duration_seconds", "How long operations took.",
                                      labels=["operation", "outcome", "project"])
    tallies: dict[tuple[str, str, str], dict[int, tuple[int, float]]] = defaultdict(dict)
    rows = OperationTally.objects.all()
    if projects is not None:
        rows = rows.filter(project__in=projects)
    for action, success, outcome, bucket, count, seconds, project in rows.values_list(
            "action", "success", "outcome", "bucket", "count", "seconds", "project"):
        # ``drift``: a drift check that found drift, apart from the checks that found none.
        tallies[(action, outcome or ("succeeded" if success else "failed"), project or DEFAULT)][bucket] = (
            count, seconds)
    for (action, outcome, project), buckets in sorted(tallies.items()):
        labels = [action, outcome, project]
        cumulative, le_counts = 0, []
        for i, bound in enumerate((*BUCKETS, math.inf)):
            cumulative += buckets.get(i, (0, 0.0))[0]
            le_counts.append(("+Inf" if bound == math.inf else str(bound), cumulative))
        total.add_metric(labels, cumulative)
        histogram.add_metric(labels, le_counts, sum(seconds for _, seconds in buckets.values()))
    yield total
    yield histogram
    # A range of the newest-first index: the rows of the last day, not the whole log.
    unfinished = GaugeMetricFamily("secretsapi_operations_unfinished", "Operations begun in the last "
                                   f"{spoken(UNFINISHED_WINDOW)} and not ended: running, or their process died.",
                                   labels=["operation", "project"])
    begun = AuditEntry.objects.filter(timestamp__gte=now - UNFINISHED_WINDOW, action__in=auditing.TIMED,
                                      success__in=[False], details__state="started")
    if projects is not None:
        begun = begun.filter(project__in=projects)
    counted: dict[tuple[str, str], int] = defaultdict(int)
    for action, project, count in begun.values("action", "project").annotate(n=Count("id")).values_list(
            "action", "project", "n"):
        counted[(action, project or DEFAULT)] += count
    for (action, project), count in sorted(counted.items()):
        unfinished.add_metric([action, project], count)
    yield unfinished


_due_lock = threading.Lock()
# (definition, lockfile setting) -> (when checked: monotonic, Unix time; (due, overdue), or None: the
# definition could not be checked)
_due_cache: dict[tuple[str, str], tuple[float, float, tuple[int, int] | None]] = {}


def _workspace(project: ProjectInfo) -> workspaces.Workspace:
    """``project``'s definition and lockfile, as a request in it reads them."""
    with current_project.using(project):
        return workspaces.workspace()


def _due_key(project: ProjectInfo) -> tuple[workspaces.Workspace | None, tuple[str, str]]:
    try:
        ws = _workspace(project)
    except ServiceError:  # not even a workspace (a refused lockfile path): checked as unreadable
        return None, (str(project.definition), "")
    # Not ``lockfile_path``: a profile's lockfile is read from the definition, which would parse
    # every project's at every scrape.
    return ws, (str(ws.definition_path), str(ws.lockfile_override))


def _check_due(ws: workspaces.Workspace | None) -> tuple[int, int] | None:
    try:
        result = service.check_rotation(ws) if ws is not None else None
    except ServiceError:
        return None
    return None if result is None else (len(result.secrets_due), len(result.secrets_overdue))


def _due_figures(projects: list[ProjectInfo]) -> dict[str, tuple[float, tuple[int, int] | None]]:
    """Each project's (when checked, figures), as checked in this process: those older than
    DUE_MAX_AGE checked again first, oldest first, within DUE_SCRAPE_SECONDS (at least one); a
    project not checked yet and not reached is missing."""
    started = time.monotonic()
    keys = [(project, *_due_key(project)) for project in projects]
    with _due_lock:
        for key in [key for key, (at, _, _) in _due_cache.items() if started - at > DUE_KEEP]:
            del _due_cache[key]
        stale = [(ws, key) for _, ws, key in keys
                 if key not in _due_cache or started - _due_cache[key][0] > DUE_MAX_AGE]
        stale.sort(key=lambda found: _due_cache[found[1]][0] if found[1] in _due_cache else -math.inf)
        for n, (ws, key) in enumerate(stale):
            if n and time.monotonic() - started >= DUE_SCRAPE_SECONDS:
                break
            _due_cache[key] = (time.monotonic(), time.time(), _check_due(ws))
        return {project.name: _due_cache[key][1:] for project, _, key in keys if key in _due_cache}


def _due(projects: list[ProjectInfo]) -> Iterator[Metric]:
    ok = GaugeMetricFamily("secretsapi_rotation_check_ok", "1 when the project's definition could be checked for "
                           "due secrets (its due and overdue gauges are then present).", labels=["project"])
    due = GaugeMetricFamily("secretsapi_secrets_due", "Secrets due for rotation, by project.", labels=["project"])
    overdue = GaugeMetricFamily("secretsapi_secrets_overdue", "Secrets past their rotation period, by project.",
                                labels=["project"])
    checked = GaugeMetricFamily("secretsapi_rotation_check_timestamp_seconds", "When the project's due and "
                                "overdue figures were checked (Unix time): they are as old as it.", labels=["project"])
    for name, (at, figures) in _due_figures(projects).items():
        ok.add_metric([name], 0 if figures is None else 1)
        checked.add_metric([name], at)
        if figures is not None:
            due.add_metric([name], figures[0])
            overdue.add_metric([name], figures[1])
    # Absent (not empty) while no project was checked, as the families without samples below.
    yield from (family for family in (ok, checked, due, overdue) if family.samples)


def _newest(action: str, project: Any) -> QuerySet[AuditEntry, Any]:
    """The timestamp of ``project``'s newest successful scheduled ``action``: the scheduler's rows
    of the kind and project newest first (one index), read until the first successful one."""
    return (AuditEntry.objects.filter(user=SCHEDULER, action=action, project=project, success=True)
            .order_by("-timestamp", "-id").values_list("timestamp", flat=True)[:1])


def _last_scheduled(action: str, projects: list[ProjectInfo]) -> dict[str, datetime]:
    """Each project's newest successful scheduled ``action``: the added projects' in one query (an
    index seek each, bench/README.md), the default one's under either of its row values."""
    names = [project.name for project in projects if not project.is_default]
    found: dict[str, datetime] = {}
    if names:
        newest = Subquery(_newest(action, OuterRef("name")))
        found.update(Project.objects.filter(name__in=names).annotate(last=newest).exclude(last=None)
                     .values_list("name", "last"))
    if any(project.is_default for project in projects):
        runs = [when for value in _rows_of([DEFAULT]) if (when := _newest(action, value).first()) is not None]
        if runs:
            found[DEFAULT] = max(runs)
    return found


def _scheduled(now: datetime, projects: list[ProjectInfo]) -> Iterator[Metric]:
    for action, name in (("execute_rotation", "rotation"), ("check_drift", "drift_check")):
        age = GaugeMetricFamily(f"secretsapi_last_scheduled_{name}_age_seconds",
                                f"Seconds since the last successful scheduled {name.replace('_', ' ')} of the "
                                "project (absent until one ran).", labels=["project"])
        last = _last_scheduled(action, projects)
        for project in projects:
            if project.name in last:
                age.add_metric([project.name], (now - last[project.name]).total_seconds())
        if age.samples:
            yield age


def _drift(projects: list[ProjectInfo]) -> Iterator[Metric]:
    """Each project's last full drift check in each environment (none: the gauges are empty)."""
    drifted = GaugeMetricFamily("secretsapi_secrets_drifted", "Secrets the last drift check of every secret "
                                "found drifted (a target differs from the lockfile, or could not be read back), "
                                "by environment (empty: the default one) and project.",
                                labels=["environment", "project"])
    unreadable = GaugeMetricFamily("secretsapi_secrets_drift_unreadable", "Of those, secrets a target of which "
                                   "the last drift check could not read back.", labels=["environment", "project"])
    checked = GaugeMetricFamily("secretsapi_last_drift_check_timestamp_seconds", "When the last drift check of "
                                "every secret ran (Unix time), by environment and project: the drift gauges are as "
                                "old as it.", labels=["environment", "project"])
    keys = {tally.definition_key(str(project.definition)): project.name for project in projects}
    rows = DriftCheck.objects.filter(definition__in=keys).order_by("environment")
    for row in sorted(rows, key=lambda row: (keys[row.definition], row.environment)):
        labels = [row.environment, keys[row.definition]]
        drifted.add_metric(labels, row.drifted)
        unreadable.add_metric(labels, row.unreadable)
        checked.add_metric(labels, row.checked_at.timestamp())
    yield drifted
    yield unreadable
    yield checked


def _scrapes() -> Iterator[Metric]:
    scrapes = CounterMetricFamily("secretsapi_scrapes", "Scrapes of GET /metrics answered, by key name (empty: "
                                  "no key) and outcome; refused ones are audited as failed authentications.",
                                  labels=["key", "outcome"])
    for key, outcome, count in ScrapeTally.objects.order_by("key", "outcome").values_list("key", "outcome", "count"):
        scrapes.add_metric([key, outcome], count)
    yield scrapes


def _deliveries() -> Iterator[Metric]:
    deliveries = GaugeMetricFamily("secretsapi_webhook_deliveries", "Webhook deliveries in the outbox, by state.",
                                   labels=["state"])
    counts = dict(Delivery.objects.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    for state, _ in Delivery.STATES:
        deliveries.add_metric([state], counts.get(state, 0))
    yield deliveries
    attempts = CounterMetricFamily("secretsapi_webhook_attempts", "Webhook delivery attempts, by outcome.",
                                   labels=["outcome"])
    ok = Q(status__gte=200, status__lt=300)
    figures = Attempt.objects.aggregate(ok=Count("id", filter=ok), all=Count("id"))
    attempts.add_metric(["succeeded"], figures["ok"])
    attempts.add_metric(["failed"], figures["all"] - figures["ok"])
    yield attempts


def _jobs() -> Iterator[Metric]:
    jobs = GaugeMetricFamily("secretsapi_jobs", "Jobs queued and running.", labels=["state"])
    for state, count in counts_by_state().items():
        jobs.add_metric([state], count)
    yield jobs


def read_metrics(*, actor: str | None, now: datetime | None = None,
                 projects: Sequence[ProjectInfo] | None = None) -> bytes:
    """The exposition, in Prometheus' text format, of ``projects`` (None: every one); the scrape
    is counted (``secretsapi_scrapes_total``) rather than audited: it reads no secret, name or
    value, and a row per scrape would bury the log."""
    metrics = CollectorRegistry(auto_describe=False)
    metrics.register(DatabaseCollector(now, projects))
    try:
        exposition = generate_latest(metrics)
    except Exception:
        # The database that failed the scrape may not take its count either: the first error stands.
        with contextlib.suppress(DatabaseError):
            tally.scraped(actor, tally.SCRAPE_FAILED)
        raise
    tally.scraped(actor, tally.SCRAPE_SUCCEEDED)
    return exposition


_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))


def spoken(delta: timedelta) -> str:
    """A length of time as a HELP text says it: ``day``, ``2 hours``, ``1 hour and 30 minutes``."""
    left = int(delta.total_seconds())
    parts = []
    for unit, seconds in _UNITS:
        count, left = divmod(left, seconds)
        if count:
            parts.append((count, unit))
    if len(parts) == 1 and parts[0][0] == 1:
        return parts[0][1]
    return " and ".join(f"{count} {unit}{'s' if count != 1 else ''}" for count, unit in parts) or "0 seconds"
