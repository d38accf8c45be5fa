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
from secretsapi import __version__
from secretsapi.api.docs import response_example
from secretsapi.api.serializers.common import HealthSerializer, RootSerializer
from secretsapi.api.views.base import StrictAPIView

DATABASE_UNREACHABLE = "database unreachable"


class RootView(StrictAPIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    lenient_query = True  # probes and browsers add parameters of their own

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

    @extend_schema(
        operation_id="health_check",
        summary="Health check",
        description="`healthy` while the API process answers and its database answers a `SELECT 1`: for "
        "load balancers and probes. `unhealthy` (503) with the `reason` when the database cannot be "
        "reached. Needs no API key and never reads the definition.",
        responses={200: OpenApiResponse(HealthSerializer, description="The API and its database are up."),
                   503: OpenApiResponse(HealthSerializer, description="The database cannot be reached.")},
        examples=[response_example("Healthy", {"status": "healthy", "version": __version__,
                                               "timestamp": "2026-01-15T09:30:00.123456+00:00"}),
                  OpenApiExample("Unhealthy", response_only=True, status_codes=["503"],
                                 value={"status": "unhealthy", "version": __version__,
                                        "timestamp": "2026-01-15T09:30:00.123456+00:00",
                                        "reason": DATABASE_UNREACHABLE})],
        auth=[],
        tags=["service"],
    )
    def get(self, request: Request) -> Response:
        body = {"status": "healthy", "version": settings.SERVICE_VERSION, "timestamp": datetime.now(UTC).isoformat()}
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            # Outcomes of operations that ended while the database was down, now that it is back.
            complete_unwritten()
        except DatabaseError:
            return Response({**body, "status": "unhealthy", "reason": DATABASE_UNREACHABLE}, status=503)
        return Response(body)
