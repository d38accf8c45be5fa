"""GET /audit/logs: query parameters and the page."""

from __future__ import annotations

from rest_framework import serializers

from audit.models import AuditEntry


class AuditQuerySerializer(serializers.Serializer):  # type: ignore[type-arg]
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=50)
    offset = serializers.IntegerField(min_value=0, default=0)
    action = serializers.CharField(required=False, allow_blank=False, max_length=64)
    resource = serializers.CharField(required=False, allow_blank=False, max_length=255)


class AuditEntrySerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = AuditEntry
        fields = ["timestamp", "action", "resource", "user", "details", "success"]


class AuditPageSerializer(serializers.Serializer):  # type: ignore[type-arg]
    entries = AuditEntrySerializer(many=True)
    count = serializers.IntegerField(help_text="Number of entries returned in this page.")
    page = serializers.IntegerField(help_text="offset // limit + 1")
    per_page = serializers.IntegerField(help_text="The page size: the requested limit.")
