"""GET /audit/logs: newest-first pages of the audit log."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from secretsapi import actions
from secretsapi.api.authentication import actor
from secretsapi.api.docs import errors
from secretsapi.api.serializers.audit import (
    AuditEntrySerializer,
    AuditPageSerializer,
    AuditQuerySerializer,
)


class AuditLogListView(APIView):
    @extend_schema(
        parameters=[AuditQuerySerializer],
        responses={200: AuditPageSerializer, **errors(401, 422, 500)},
        tags=["audit"],
    )
    def get(self, request: Request) -> Response:
        query = AuditQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        entries = actions.read_audit_logs(
            actor=actor(request),
            limit=q["limit"],
            offset=q["offset"],
            action=q.get("action"),
            resource=q.get("resource"),
            success=q.get("success"),
            user=q.get("user"),
            since=q.get("since"),
            until=q.get("until"),
            secret=q.get("secret"),
        )
        return Response(
            {
                "entries": AuditEntrySerializer(entries, many=True).data,
                "count": len(entries),
                "page": q["offset"] // q["limit"] + 1,
                "per_page": q["limit"],
            }
        )
