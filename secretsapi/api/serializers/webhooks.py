"""The webhook endpoints (``/webhooks``, ``/webhooks/{id}``) and their deliveries' page."""

from __future__ import annotations

from rest_framework import serializers

from secretsapi.actions.webhooks import SECRET_MAX, SECRET_MIN
from secretsapi.api.pagination import PageLinksSerializer
from secretsapi.api.serializers.strict import (
    DB_INT_MAX,
    StrictBooleanField,
    StrictCharField,
    StrictListField,
    StrictQuerySerializer,
    StrictRequestSerializer,
)
from webhooks.models import EVENTS, Attempt, Delivery, Endpoint


class WebhookCreateRequestSerializer(StrictRequestSerializer):
    url = StrictCharField(max_length=2048, help_text="Where to POST the signed events (https, or http with "
                                                      "SERVICE_WEBHOOK_ALLOW_HTTP).")
    events = StrictListField(child=serializers.ChoiceField(choices=list(EVENTS)), required=False,
                             max_length=len(EVENTS), help_text="The events to send; every event when absent or empty.")
    secret = StrictCharField(
        required=False, min_length=SECRET_MIN, max_length=SECRET_MAX,
        help_text="The signing secret; generated (and answered once) when absent.")
    projects = StrictListField(child=StrictCharField(max_length=63), required=False, max_length=1000,
                               help_text="The projects whose events it is sent; every project's when absent or "
                                         "empty. Under `/projects/{project}/`: that project alone.")


class WebhookUpdateRequestSerializer(StrictRequestSerializer):
    enabled = StrictBooleanField(help_text="false: stop sending (pending deliveries wait); true: send again.")


class WebhookSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    url = serializers.CharField(source="shown_url", help_text="The URL, its query values and credentials redacted.")

    class Meta:
        model = Endpoint
        fields: tuple[str, ...] = ("id", "url", "events", "enabled", "created_at", "projects")


class WebhookCreatedSerializer(WebhookSerializer):
    secret = serializers.CharField(
        allow_null=True, help_text="The generated signing secret, shown this once (never again, in no list); "
                                   "null when the request gave one.")

    class Meta(WebhookSerializer.Meta):
        fields = (*WebhookSerializer.Meta.fields, "secret")


class WebhookListSerializer(serializers.Serializer):  # type: ignore[type-arg]
    webhooks = WebhookSerializer(many=True)
    count = serializers.IntegerField()


class DeliveryQuerySerializer(StrictQuerySerializer):
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=50)
    offset = serializers.IntegerField(min_value=0, max_value=DB_INT_MAX, default=0)
    state = serializers.ChoiceField(choices=[s for s, _ in Delivery.STATES], required=False,
                                    help_text="Only deliveries in this state.")


class DeliveryAttemptSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = Attempt
        fields = ("at", "status", "error", "duration_ms")


class DeliverySerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    attempt_log = DeliveryAttemptSerializer(many=True, source="attempt_rows",
                                            help_text="Every attempt, oldest first.")

    class Meta:
        model = Delivery
        fields = ("id", "event", "payload", "state", "attempts", "next_attempt_at", "last_status", "last_error",
                  "created_at", "updated_at", "attempt_log")


class DeliveryPageSerializer(PageLinksSerializer):
    deliveries = DeliverySerializer(many=True)
    count = serializers.IntegerField(help_text="Number of deliveries returned in this page.")
    page = serializers.IntegerField(help_text="offset // limit + 1")
    per_page = serializers.IntegerField(help_text="The page size: the requested limit.")
