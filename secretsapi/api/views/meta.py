"""Unauthenticated endpoints: the root and the health check."""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi import __version__
from secretsapi.api.docs import response_example
from secretsapi.api.serializers.common import HealthSerializer, RootSerializer
from secretsapi.api.views.base import StrictAPIView


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
        description="`healthy` while the API process answers: for load balancers and probes. Needs no "
        "API key and touches neither the definition nor the database, so it says nothing about them.",
        responses={200: OpenApiResponse(HealthSerializer, description="The API is up.")},
        examples=[response_example("Healthy", {"status": "healthy", "version": __version__,
                                               "timestamp": "2026-01-15T09:30:00.123456+00:00"})],
        auth=[],
        tags=["service"],
    )
    def get(self, request: Request) -> Response:
        return Response(
            {
                "status": "healthy",
                "version": settings.SERVICE_VERSION,
                "timestamp": datetime.now(UTC).isoformat(),
            }
        )
