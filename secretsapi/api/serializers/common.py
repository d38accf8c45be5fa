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
    status = serializers.ChoiceField(
        choices=["healthy", "degraded", "unhealthy"],
        help_text="`healthy` while the API, its database and a job worker answer; `degraded` when no job worker "
        "has sent a heartbeat lately (long operations then answer 503 `no_worker`); `unhealthy` (503) when the "
        "database cannot be reached.")
    version = serializers.CharField()
    timestamp = serializers.DateTimeField()
    database = serializers.ChoiceField(choices=["up", "down"], help_text="Whether the database answered.")
    workers = serializers.ChoiceField(
        choices=["up", "down"], help_text="Whether a job worker sent a heartbeat within three of its beats "
        "(SERVICE_WORKER_HEARTBEAT_SECONDS, 30 s by default).")
    last_heartbeat = serializers.DateTimeField(
        allow_null=True, help_text="When a job worker last sent its heartbeat; null when none ever has (or the "
        "database is down).")
    reason = serializers.CharField(required=False, help_text="Why it is unhealthy (`database unreachable`).")
