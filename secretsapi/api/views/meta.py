"""Unauthenticated endpoints: the root and the health check."""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from secretsapi.api.serializers.common import HealthSerializer, RootSerializer


class RootView(APIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)

    @extend_schema(responses={200: RootSerializer}, auth=[], tags=["service"])
    def get(self, request: Request) -> Response:
        return Response(
            {"message": "Secrets orchestration API", "version": settings.SERVICE_VERSION, "docs": "/docs"}
        )


class HealthView(APIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)

    @extend_schema(responses={200: HealthSerializer}, auth=[], tags=["service"])
    def get(self, request: Request) -> Response:
        return Response(
            {
                "status": "healthy",
                "version": settings.SERVICE_VERSION,
                "timestamp": datetime.now(UTC).isoformat(),
            }
        )
