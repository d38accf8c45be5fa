"""GET /webhooks/{id}/deliveries: an endpoint's deliveries and every attempt at each."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi.api.authentication import actor
from secretsapi.api.docs import EXAMPLE_SECRET, EXAMPLE_TIME, errors, response_example
from secretsapi.api.pagination import page_body
from secretsapi.api.serializers.webhooks import DeliveryPageSerializer, DeliveryQuerySerializer, DeliverySerializer
from secretsapi.api.views.base import StrictAPIView
from webhooks import actions


class WebhookDeliveryListView(StrictAPIView):
    query_serializer = DeliveryQuerySerializer

    @extend_schema(
        parameters=[DeliveryQuerySerializer,
                    OpenApiParameter("webhook_id", OpenApiTypes.STR, OpenApiParameter.PATH,
                                     description="The endpoint's id (`manage.py webhook list`).")],
        responses={
            200: OpenApiResponse(DeliveryPageSerializer, description="One page of deliveries, newest first."),
            **errors(401, 403, 404, 422, 500),
        },
        operation_id="list_webhook_deliveries",
        summary="Read a webhook's deliveries",
        description="The endpoint's deliveries, newest first, `limit` per page from `offset`, each with every "
        "attempt (when, the status answered or why there was none, how long it took). Payloads name secrets "
        "and targets, never values or hashes. Fails with 404 for an unknown endpoint and 422 for an unknown, "
        "empty or out-of-range parameter.",
        examples=[response_example("One delivery", {
            "deliveries": [{
                "id": 31, "event": "rotation.completed",
                "payload": {"id": "5b0c6c43-4d8e-4a57-9f0b-2f4c0c1e7a9e", "event": "rotation.completed",
                            "created_at": EXAMPLE_TIME, "actor": "scheduler", "audit_id": 412,
                            "data": {"rotated": [EXAMPLE_SECRET], "written_targets": {}}},
                "state": "delivered", "attempts": 2, "next_attempt_at": EXAMPLE_TIME, "last_status": 204,
                "last_error": "", "created_at": EXAMPLE_TIME, "updated_at": EXAMPLE_TIME,
                "attempt_log": [{"at": EXAMPLE_TIME, "status": 503, "error": "answered 503", "duration_ms": 41},
                                {"at": EXAMPLE_TIME, "status": 204, "error": "", "duration_ms": 38}],
            }],
            "count": 1, "page": 1, "per_page": 50, "total": 1, "next": None, "previous": None,
        })],
        tags=["webhooks"],
    )
    def get(self, request: Request, webhook_id: str) -> Response:
        query = DeliveryQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        page = actions.read_deliveries(webhook_id, actor=actor(request), limit=q["limit"], offset=q["offset"],
                                       state=q.get("state"))
        return Response(page_body(request, "deliveries", DeliverySerializer(page, many=True).data, page,
                                  limit=q["limit"], offset=q["offset"]))
