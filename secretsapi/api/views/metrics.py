"""GET /metrics: Prometheus' text format, computed from the database at scrape time."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework.authentication import BaseAuthentication
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.permissions import AllowAny
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

from secretsapi.api.authentication import actor, request_principal, sends_key
from secretsapi.api.docs import errors
from secretsapi.api.projects import scraped_projects
from secretsapi.api.views.base import StrictAPIView

EXAMPLE = """\
# HELP secretsapi_operations_total Operations ended, by outcome and project.
# TYPE secretsapi_operations_total counter
secretsapi_operations_total{operation="execute_rotation",outcome="succeeded",project="default"} 24.0
# HELP secretsapi_secrets_drifted Secrets the last drift check of every secret found drifted (a target \
differs from the lockfile, or could not be read back), by environment (empty: the default one) and project.
# TYPE secretsapi_secrets_drifted gauge
secretsapi_secrets_drifted{environment="",project="default"} 1.0
secretsapi_secrets_drifted{environment="",project="payments"} 0.0
# HELP secretsapi_secrets_overdue Secrets past their rotation period, by project.
# TYPE secretsapi_secrets_overdue gauge
secretsapi_secrets_overdue{project="default"} 0.0
secretsapi_secrets_overdue{project="payments"} 2.0
"""


class JSONErrorsNegotiation(BaseContentNegotiation):
    """Whatever a scraper accepts, the exposition is text and an error is the one JSON body."""

    def select_renderer(self, request: Request, renderers: Iterable[BaseRenderer],
                        format_suffix: str | None = None) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        return next(iter(parsers), None)


class MetricsView(StrictAPIView):
    content_negotiation_class = JSONErrorsNegotiation

    def get_authenticators(self) -> list[BaseAuthentication]:
        # Public: a scraper without a key is let in; one that sends a key is still checked (and named).
        # The schema's generator asks before there is a request: it documents the scrape without one.
        request = getattr(self, "request", None)
        if settings.SERVICE_METRICS_PUBLIC and (request is None or not sends_key(request.headers)):
            return []
        return super().get_authenticators()

    def get_permissions(self) -> Sequence[Any]:
        if settings.SERVICE_METRICS_PUBLIC:
            return [AllowAny()]
        return super().get_permissions()

    @extend_schema(
        responses={
            (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="Prometheus' text format."),
            **errors(401, 403, 500),
        },
        operation_id="metrics",
        summary="Prometheus metrics",
        description="Operations by kind and outcome with their durations, secrets due and overdue, secrets the "
        "last drift check of every secret found drifted (per environment, with when it ran), seconds since the "
        "last successful scheduled rotation and drift check, scrapes by key and outcome, jobs, and webhook "
        "deliveries by state: computed from the database at each scrape, so every worker and instance answers "
        "the same figures. Each project's figures carry a `project` label: `GET /metrics` shows every project "
        "(a key limited to projects, its own), `GET /projects/{project}/metrics` that project's. Needs a key "
        "with the `metrics` scope (in `X-API-Key` or `Authorization: Bearer`, as Prometheus' `authorization` "
        "sends it) unless SERVICE_METRICS_PUBLIC=true. A scrape is counted, "
        "not audited. Labels name operations, outcomes, states, key names, environments and projects only.",
        examples=[OpenApiExample("Exposition", value=EXAMPLE, response_only=True, status_codes=["200"],
                                 media_type="text/plain")],
        tags=["metrics"],
    )
    def get(self, request: Request) -> HttpResponse:
        # Imported at the first scrape, not when the URLs load: prometheus_client is of no use to
        # any other request, and a web worker's boot is shorter without it.
        from prometheus_client import CONTENT_TYPE_LATEST

        from secretsapi.actions.metrics import read_metrics

        # Public and without a key: nobody is named, as in insecure mode.
        who = actor(request) if request_principal(request) is not None else None
        return HttpResponse(read_metrics(actor=who, projects=scraped_projects(request)),
                            content_type=CONTENT_TYPE_LATEST)
