"""GET /audit/logs: newest-first pages of the audit log, or every matching row as NDJSON."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponseBase, StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from audit.export import AuditFilter, jsonl
from secretsapi.actions import auditlog
from secretsapi.api.authentication import actor
from secretsapi.api.docs import EXAMPLE_SECRET, EXAMPLE_TIME, errors, response_example
from secretsapi.api.pagination import page_body
from secretsapi.api.projects import listing_project
from secretsapi.api.renderers import FormatNegotiation, NDJSONRenderer
from secretsapi.api.serializers.audit import (
    AuditEntrySerializer,
    AuditPageSerializer,
    AuditQuerySerializer,
)
from secretsapi.api.views.base import StrictAPIView

NDJSON_HELP = ("With `Accept: application/x-ndjson` or `?format=jsonl`: every matching row, oldest first, "
               "one entry per line, streamed (`limit` and `offset`, when given, cut the stream).")


class AuditLogListView(StrictAPIView):
    query_serializer = AuditQuerySerializer
    renderer_classes = (JSONRenderer, NDJSONRenderer)
    content_negotiation_class = FormatNegotiation

    @extend_schema(
        parameters=[AuditQuerySerializer],
        responses={
            (200, "application/json"): OpenApiResponse(AuditPageSerializer,
                                                       description="One page of entries, newest first."),
            (200, "application/x-ndjson"): OpenApiResponse(AuditEntrySerializer, description=NDJSON_HELP),
            **errors(401, 422, 500),
        },
        operation_id="list_audit_logs",
        summary="Read the audit log",
        description="Audit entries, newest first, `limit` per page from `offset` (`page` is "
        "`offset // limit + 1`), optionally filtered by the parameters below. Every operation writes one "
        "entry naming who acted, what it touched and whether it succeeded; `details` carry names, "
        "counts and hashes, never values. Fails with 422 for an unknown, empty or out-of-range parameter. "
        + NDJSON_HELP,
        examples=[response_example("One entry", {
            "entries": [{"timestamp": EXAMPLE_TIME.replace("+00:00", "Z"), "action": "sync",
                         "resource": f"secret:{EXAMPLE_SECRET}", "user": "service",
                         "details": {"dry_run": False, "force": False, "repair": False, "secret_name": EXAMPLE_SECRET,
                                     "var_files": [], "generated": [EXAMPLE_SECRET], "skipped": [], "failed": [],
                                     "errors": [], "repaired": []},
                         "success": True, "outcome": "ok", "project": "default",
                         "definition_project": "payments",
                         "definition": "/srv/app/Secretfile.yml", "environment": "production",
                         "origin": "client:203.0.113.7"}],
            "count": 1, "page": 1, "per_page": 50, "total": 1, "next": None, "previous": None,
        })],
        tags=["audit"],
    )
    def get(self, request: Request) -> HttpResponseBase:
        query = AuditQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        project = listing_project(request, q.get("project"))
        if isinstance(request.accepted_renderer, NDJSONRenderer):
            where = AuditFilter(**{k: q.get(k) for k in ("action", "resource", "success", "user", "since",
                                                          "until", "secret")}, project=project)
            given = request.query_params
            rows = auditlog.export_audit_logs(actor=actor(request), where=where, offset=q["offset"],
                                              limit=q["limit"] if "limit" in given else None)
            response = StreamingHttpResponse(jsonl(rows), content_type=NDJSONRenderer.media_type)
            # nginx (deploy/) passes each line on as it comes (a follower of the stream sees it at once).
            response["X-Accel-Buffering"] = "no"
            return response
        entries = auditlog.read_audit_logs(
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
            project=project,
        )
        return Response(page_body(request, "entries", AuditEntrySerializer(entries, many=True).data, entries,
                                  limit=q["limit"], offset=q["offset"]))

    def finalize_response(self, request: Request, response: HttpResponseBase, *args: Any, **kwargs: Any) -> Any:
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[arg-type]  # DRF passes a streamed answer through too
        # An error asked for as NDJSON is still the one JSON error body.
        if isinstance(response, Response) and isinstance(response.accepted_renderer, NDJSONRenderer):
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
        return response
