"""GET /webhooks/{id}/deliveries: query parameters and the page."""

from __future__ import annotations

from rest_framework import serializers

from secretsapi.api.pagination import PageLinksSerializer
from secretsapi.api.serializers.strict import DB_INT_MAX, StrictQuerySerializer
from webhooks.models import Attempt, Delivery


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
