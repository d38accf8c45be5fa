"""The webhook endpoints, as ``manage.py webhook`` manages them (scope ``webhooks``), and an
endpoint's deliveries with every attempt at each (scope ``audit``)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi.actions import webhooks as webhook_actions
from secretsapi.api.authentication import actor
from secretsapi.api.docs import EXAMPLE_SECRET, EXAMPLE_TIME, errors, request_example, response_example
from secretsapi.api.pagination import page_body
from secretsapi.api.projects import listing_project
from secretsapi.api.serializers.webhooks import (
    DeliveryPageSerializer,
    DeliveryQuerySerializer,
    DeliverySerializer,
    WebhookCreatedSerializer,
    WebhookCreateRequestSerializer,
    WebhookListSerializer,
    WebhookSerializer,
    WebhookUpdateRequestSerializer,
)
from secretsapi.api.views.base import StrictAPIView

WEBHOOK_ID = OpenApiParameter("webhook_id", OpenApiTypes.STR, OpenApiParameter.PATH,
                              description="The endpoint's id (`GET /webhooks`, `manage.py webhook list`).")
EXAMPLE_WEBHOOK = {"id": 3, "url": "https://hooks.example.com/secrets?token=REDACTED",
                   "events": ["drift.detected", "rotation.failed"], "enabled": True, "created_at": EXAMPLE_TIME}


class WebhookListView(StrictAPIView):
    no_store = True

    @extend_schema(
        responses={200: OpenApiResponse(WebhookListSerializer, description="Every endpoint, oldest first."),
                   **errors(401, 403, 422, 500)},
        operation_id="list_webhooks",
        summary="List webhook endpoints",
        description="Every endpoint with its events and state. URLs show no query value or credential; a "
        "signing secret is never listed.",
        examples=[response_example("One endpoint", {"webhooks": [EXAMPLE_WEBHOOK], "count": 1})],
        tags=["webhooks"],
    )
    def get(self, request: Request) -> Response:
        endpoints = webhook_actions.list_webhooks(actor=actor(request), project=listing_project(request, None))
        return Response({"webhooks": WebhookSerializer(endpoints, many=True).data, "count": len(endpoints)})

    @extend_schema(
        request=WebhookCreateRequestSerializer,
        responses={201: OpenApiResponse(WebhookCreatedSerializer,
                                        description="The endpoint, with its generated secret shown this once."),
                   **errors(400, 401, 403, 413, 415, 422, 500)},
        operation_id="create_webhook",
        summary="Add a webhook endpoint",
        description="Adds an enabled endpoint for `events` (every event when absent). Without `secret`, one is "
        "generated and answered in `secret` this once: keep it to verify signatures. 422 for a URL the "
        "service refuses (a private address, credentials in it), an unknown event or a weak secret.",
        examples=[
            request_example("Drift and failed rotations", {
                "url": "https://hooks.example.com/secrets", "events": ["drift.detected", "rotation.failed"]},
                "An endpoint for two events; the service generates its secret"),
            OpenApiExample("Created", response_only=True, status_codes=["201"],
                           value={**EXAMPLE_WEBHOOK, "secret": "kW3pQ7vX2mR9sT4uY8zB1cD5eF6gH0jK3lN7oP2qS4w"}),
        ],
        tags=["webhooks"],
    )
    def post(self, request: Request) -> Response:
        body = WebhookCreateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        given = body.validated_data.get("secret")
        secret = given or webhook_actions.new_secret()
        confined = listing_project(request, None)
        chosen = [confined] if confined is not None else body.validated_data.get("projects") or []
        endpoint = webhook_actions.add_webhook(body.validated_data["url"], body.validated_data.get("events") or [],
                                               secret, actor=actor(request), projects=chosen)
        data = {**WebhookSerializer(endpoint).data, "secret": None if given else secret}
        return Response(data, status=201)


class WebhookDetailView(StrictAPIView):
    no_store = True

    @extend_schema(
        parameters=[WEBHOOK_ID],
        responses={200: OpenApiResponse(WebhookSerializer, description="The endpoint (never its secret)."),
                   **errors(401, 403, 404, 422, 500)},
        operation_id="get_webhook", summary="Read a webhook endpoint",
        examples=[response_example("An endpoint", EXAMPLE_WEBHOOK)],
        tags=["webhooks"],
    )
    def get(self, request: Request, webhook_id: str) -> Response:
        return Response(WebhookSerializer(webhook_actions.read_webhook(webhook_id, actor=actor(request),
                                                                     project=listing_project(request, None))).data)

    @extend_schema(
        parameters=[WEBHOOK_ID],
        request=WebhookUpdateRequestSerializer,
        responses={200: OpenApiResponse(WebhookSerializer, description="The endpoint as it is now."),
                   **errors(400, 401, 403, 404, 413, 415, 422, 500)},
        operation_id="update_webhook", summary="Enable or disable a webhook endpoint",
        description="`enabled: false` stops sending to the endpoint (its pending deliveries wait); "
        "`enabled: true` sends again.",
        examples=[request_example("Disable", {"enabled": False}, "Stop sending to the endpoint"),
                  response_example("Disabled", {**EXAMPLE_WEBHOOK, "enabled": False})],
        tags=["webhooks"],
    )
    def patch(self, request: Request, webhook_id: str) -> Response:
        body = WebhookUpdateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        endpoint = webhook_actions.set_webhook_enabled(webhook_id, body.validated_data["enabled"], actor=actor(request),
                                                       project=listing_project(request, None))
        return Response(WebhookSerializer(endpoint).data)

    @extend_schema(
        parameters=[WEBHOOK_ID],
        responses={204: OpenApiResponse(description="Removed, with its deliveries (pending ones are never sent)."),
                   **errors(401, 403, 404, 422, 500)},
        operation_id="delete_webhook", summary="Remove a webhook endpoint",
        tags=["webhooks"],
    )
    def delete(self, request: Request, webhook_id: str) -> Response:
        webhook_actions.remove_webhook(webhook_id, actor=actor(request), project=listing_project(request, None))
        return Response(status=204)


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
        page = webhook_actions.read_deliveries(webhook_id, actor=actor(request), project=listing_project(request, None),
                                               limit=q["limit"], offset=q["offset"],
                                               state=q.get("state"))
        return Response(page_body(request, "deliveries", DeliverySerializer(page, many=True).data, page,
                                  limit=q["limit"], offset=q["offset"]))
