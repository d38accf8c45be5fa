"""GET /jobs and GET /jobs/{id}: the job, its list's query parameters and page."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from jobs.models import Job
from jobs.operations import OPERATIONS
from secretsapi.api.serializers.strict import DB_INT_MAX, StrictQuerySerializer


class JobProgressSerializer(serializers.Serializer):  # type: ignore[type-arg]
    done = serializers.IntegerField(help_text="Secrets done.")
    total = serializers.IntegerField(allow_null=True, help_text="Secrets to do; null until the operation knows.")


class JobSummarySerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    progress = serializers.SerializerMethodField()
    status = serializers.IntegerField(source="status_code", allow_null=True,
                                      help_text="Once ended: the HTTP status the synchronous call answers.")
    params = serializers.DictField(help_text="The request as its audit row shows it: names and flags, never values.")

    class Meta:
        model = Job
        fields = ("id", "operation", "state", "progress", "actor", "params", "created_at", "started_at",
                  "finished_at", "status")

    @extend_schema_field(JobProgressSerializer)
    def get_progress(self, job: Job) -> dict[str, Any]:
        return {"done": job.done, "total": job.total}


class JobSerializer(JobSummarySerializer):
    result = serializers.DictField(
        allow_null=True, help_text="Once ended: the body the synchronous call answers (the error body if it failed).")

    class Meta(JobSummarySerializer.Meta):
        fields = (*JobSummarySerializer.Meta.fields, "result")  # type: ignore[assignment]  # one more field


class JobQuerySerializer(StrictQuerySerializer):
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=50)
    offset = serializers.IntegerField(min_value=0, max_value=DB_INT_MAX, default=0)
    state = serializers.ChoiceField(choices=[state for state, _ in Job.STATES], required=False)
    operation = serializers.ChoiceField(choices=sorted(OPERATIONS), required=False)
    since = serializers.DateTimeField(
        required=False, default_timezone=UTC,
        help_text="Jobs created at or after this instant (ISO 8601; without a zone it is UTC).")


class JobPageSerializer(serializers.Serializer):  # type: ignore[type-arg]
    jobs = JobSummarySerializer(many=True)
    count = serializers.IntegerField(help_text="Jobs on this page.")
    page = serializers.IntegerField()
    per_page = serializers.IntegerField()
