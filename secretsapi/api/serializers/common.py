"""Shapes shared by every endpoint: the error body, the root and the health check."""

from __future__ import annotations

from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):  # type: ignore[type-arg]
    error = serializers.CharField(help_text="Brief description (the status' title).")
    detail = serializers.CharField(help_text="What went wrong, in one sentence.")
    timestamp = serializers.DateTimeField(help_text="ISO 8601 time of the error.")


class RootSerializer(serializers.Serializer):  # type: ignore[type-arg]
    message = serializers.CharField()
    version = serializers.CharField()
    docs = serializers.CharField(help_text="Path of the interactive documentation.")


class HealthSerializer(serializers.Serializer):  # type: ignore[type-arg]
    status = serializers.CharField(help_text="`healthy`, or `unhealthy` when the database cannot be reached.")
    version = serializers.CharField()
    timestamp = serializers.DateTimeField()
    reason = serializers.CharField(required=False, help_text="Why it is unhealthy (`database unreachable`).")
