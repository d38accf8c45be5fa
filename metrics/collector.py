"""``GET /metrics``: every figure computed from the database (and the definition) at scrape time.

Several gunicorn workers and several instances share one database, so any of them answers a
scrape with the same, complete figures; counters kept in a process's memory would give each
worker's share only (prometheus_client's multiprocess mode fixes that for one host, not for
several instances). Operations and their durations come from the audit rows, which every
operation writes with ``duration_seconds``; deliveries from the webhook outbox. Labels hold
operation names, outcomes and states only: never a secret's name, value or hash.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime

from django.db.models import Count, FloatField, Max, Q, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from audit.models import AuditEntry
from secretsapi import actions, service
from secretsapi.service.errors import ServiceError
from webhooks.models import Attempt, Delivery

BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)
SCHEDULER = "scheduler"
# The rotation check behind the due and overdue gauges reads the definition and the lockfile:
# done at most once a minute per process, however often Prometheus scrapes.
DUE_MAX_AGE = 60.0


class DatabaseCollector(Collector):
    def __init__(self, now: datetime | None = None) -> None:
        self.now = now

    def collect(self) -> Iterator[Metric]:
        now = self.now or timezone.now()
        yield from _operations()
        yield from _due()
        yield from _scheduled(now)
        yield from _deliveries()


def _operations() -> Iterator[Metric]:
    rows = AuditEntry.objects.filter(action__in=actions.TIMED)
    started = Q(details__state="started")
    total = CounterMetricFamily("secretsapi_operations", "Operations recorded in the audit log, by outcome "
                                "(started: begun and not yet ended, or its process died).",
                                labels=["operation", "outcome"])
    for action, success, is_started, count in (
            rows.values("action", "success").annotate(started=Count("id", filter=started), n=Count("id"))
            .values_list("action", "success", "started", "n").order_by("action", "success")):
        if is_started:
            total.add_metric([action, "started"], is_started)
        if count - is_started:
            total.add_metric([action, "succeeded" if success else "failed"], count - is_started)
    yield total
    duration = Cast(KT("details__duration_seconds"), FloatField())
    timed = rows.filter(details__has_key="duration_seconds").annotate(seconds=duration)
    aggregates = {f"le{i}": Count("id", filter=Q(seconds__lte=le)) for i, le in enumerate(BUCKETS)}
    histogram = HistogramMetricFamily("secretsapi_operation_duration_seconds",
                                      "How long operations took, from their audit rows.",
                                      labels=["operation", "outcome"])
    for row in (timed.values("action", "success").annotate(n=Count("id"), total=Sum("seconds"), **aggregates)
                .order_by("action", "success")):
        buckets = [(str(le), row[f"le{i}"]) for i, le in enumerate(BUCKETS)] + [("+Inf", row["n"])]
        histogram.add_metric([row["action"], "succeeded" if row["success"] else "failed"], buckets,
                             row["total"] or 0.0)
    yield histogram


_due_lock = threading.Lock()
_due_cache: dict[str, tuple[float, tuple[int, int] | None]] = {}


def _due() -> Iterator[Metric]:
    ws = actions.workspace()
    key = str(ws.definition_path)
    with _due_lock:
        cached = _due_cache.get(key)
        if cached is None or time.monotonic() - cached[0] > DUE_MAX_AGE:
            try:
                result = service.check_rotation(ws)
                figures: tuple[int, int] | None = (len(result.secrets_due), len(result.secrets_overdue))
            except ServiceError:
                figures = None
            cached = _due_cache[key] = (time.monotonic(), figures)
    ok = GaugeMetricFamily("secretsapi_rotation_check_ok", "1 when the definition could be checked for "
                           "due secrets (the due and overdue gauges are then present).")
    ok.add_metric([], 0 if cached[1] is None else 1)
    yield ok
    if cached[1] is not None:
        yield GaugeMetricFamily("secretsapi_secrets_due", "Secrets due for rotation.", value=cached[1][0])
        yield GaugeMetricFamily("secretsapi_secrets_overdue", "Secrets past their rotation period.",
                                value=cached[1][1])


def _scheduled(now: datetime) -> Iterator[Metric]:
    last = dict(AuditEntry.objects.filter(user=SCHEDULER, success__in=[True],
                                          action__in=["execute_rotation", "check_drift"])
                .values_list("action").annotate(at=Max("timestamp")).values_list("action", "at"))
    for action, name in (("execute_rotation", "rotation"), ("check_drift", "drift_check")):
        if action in last:
            yield GaugeMetricFamily(f"secretsapi_last_scheduled_{name}_age_seconds",
                                    f"Seconds since the last successful scheduled {name.replace('_', ' ')} "
                                    "(absent until one ran).", value=(now - last[action]).total_seconds())


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


def read_metrics(*, actor: str | None, now: datetime | None = None) -> bytes:
    """The exposition, in Prometheus' text format; the scrape is audited like any read."""
    with actions.audited("read_metrics", "metrics", actor):
        registry = CollectorRegistry(auto_describe=False)
        registry.register(DatabaseCollector(now))
        return generate_latest(registry)
