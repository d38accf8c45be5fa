"""Unauthenticated endpoints: the root and the health check."""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.db import DatabaseError, connection
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from audit.recorder import complete_unwritten
from jobs import workers
from secretsapi import __version__
from secretsapi.api.docs import response_example
from secretsapi.api.serializers.common import HealthSerializer, RootSerializer
from secretsapi.api.views.base import StrictAPIView

DATABASE_UNREACHABLE = "database unreachable"


class RootView(StrictAPIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    lenient_query = True  # probes and browsers add parameters of their own
    project_scoped = False  # the service's, whichever projects a key may touch

    @extend_schema(
        operation_id="service_info",
        summary="Service information",
        description="The service's name, version and where its documentation is. Needs no API key; "
        "never fails while the server runs.",
        responses={200: OpenApiResponse(RootSerializer, description="The service's name and version.")},
        examples=[response_example("Root", {"message": "Secrets orchestration API", "version": __version__,
                                            "docs": "/docs"})],
        auth=[],
        tags=["service"],
    )
    def get(self, request: Request) -> Response:
        return Response(
            {"message": "Secrets orchestration API", "version": settings.SERVICE_VERSION, "docs": "/docs"}
        )


class HealthView(StrictAPIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    lenient_query = True  # probes and browsers add parameters of their own
    project_scoped = False  # the service's, whichever projects a key may touch

    @extend_schema(
        operation_id="health_check",
        summary="Health check",
        description="For load balancers and probes: whether the API, its database and the job workers answer, "
        "each only as `up` or `down`. `healthy` while the database answers a `SELECT 1` and a job worker sent "
        "a heartbeat lately; `degraded` (still 200: the API answers) when no worker did, so long operations "
        "answer 503 `no_worker`; `unhealthy` (503) with the `reason` when the database cannot be reached. "
        "Needs no API key and never reads the definition.",
        responses={200: OpenApiResponse(HealthSerializer, description="The API and its database are up."),
                   503: OpenApiResponse(HealthSerializer, description="The database cannot be reached.")},
        examples=[response_example("Healthy", {"status": "healthy", "version": __version__,
                                               "timestamp": "2026-01-15T09:30:00.123456+00:00",
                                               "database": "up", "workers": "up",
                                               "last_heartbeat": "2026-01-15T09:29:55.012345+00:00"}),
                  response_example("No job worker", {"status": "degraded", "version": __version__,
                                                     "timestamp": "2026-01-15T09:30:00.123456+00:00",
                                                     "database": "up", "workers": "down",
                                                     "last_heartbeat": "2026-01-15T09:12:40.551200+00:00"}),
                  OpenApiExample("Unhealthy", response_only=True, status_codes=["503"],
                                 value={"status": "unhealthy", "version": __version__,
                                        "timestamp": "2026-01-15T09:30:00.123456+00:00",
                                        "database": "down", "workers": "down", "last_heartbeat": None,
                                        "reason": DATABASE_UNREACHABLE})],
        auth=[],
        tags=["service"],
    )
    def get(self, request: Request) -> Response:
        body: dict[str, object] = {"status": "healthy", "version": settings.SERVICE_VERSION,
                                   "timestamp": datetime.now(UTC).isoformat()}
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            # Outcomes of operations that ended while the database was down, now that it is back.
            complete_unwritten()
            seen = workers.last_seen()
            alive = workers.alive()
        except DatabaseError:
            return Response({**body, "status": "unhealthy", "database": "down", "workers": "down",
                             "last_heartbeat": None, "reason": DATABASE_UNREACHABLE}, status=503)
        return Response({**body, "status": "healthy" if alive else "degraded", "database": "up",
                         "workers": "up" if alive else "down",
                         "last_heartbeat": seen.isoformat() if seen is not None else None})
