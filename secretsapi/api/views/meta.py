"""Unauthenticated endpoints: the root and the health check."""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi.api.serializers.common import HealthSerializer, RootSerializer
from secretsapi.api.views.base import StrictAPIView


class RootView(StrictAPIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    lenient_query = True  # probes and browsers add parameters of their own

    @extend_schema(responses={200: RootSerializer}, auth=[], tags=["service"])
    def get(self, request: Request) -> Response:
        return Response(
            {"message": "Secrets orchestration API", "version": settings.SERVICE_VERSION, "docs": "/docs"}
        )


class HealthView(StrictAPIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    lenient_query = True  # probes and browsers add parameters of their own

    @extend_schema(responses={200: HealthSerializer}, auth=[], tags=["service"])
    def get(self, request: Request) -> Response:
        return Response(
            {
                "status": "healthy",
                "version": settings.SERVICE_VERSION,
                "timestamp": datetime.now(UTC).isoformat(),
            }
        )
