"""GET /jobs and GET /jobs/{id}: the job, its list's query parameters and page; and the body a
job's stored result (data) answers, rendered here."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from jobs.queue import STATES, JobRecord
from secretsapi.api.errors import failure_answer
from secretsapi.api.pagination import PageLinksSerializer
from secretsapi.api.serializers import config as c
from secretsapi.api.serializers import operations as s
from secretsapi.api.serializers.strict import DB_INT_MAX, StrictQuerySerializer
from secretsapi.operations import OPERATIONS


def _agent_sync(result: Any) -> dict[str, Any]:
    sync, status, found = (result.sync, result.status, result.outcomes) if not isinstance(result, dict) else (
        result["sync"], result["status"], result["outcomes"])
    return {**s.SyncResultSerializer(sync).data, "status": status,
            "outcomes": s.SecretOutcomeSerializer(found, many=True).data}


def _with(serializer: type[serializers.Serializer]) -> Callable[[Any], dict[str, Any]]:  # type: ignore[type-arg]
    return lambda result: dict(serializer(result).data)


# Each operation's result (the engine's dataclass, or a job's stored data) -> its 200 body.
RENDER: dict[str, Callable[[Any], dict[str, Any]]] = {
    "sync": _with(s.SyncResultSerializer),
    "agent_sync": _agent_sync,
    "check_rotation": _with(s.RotationCheckResultSerializer),
    "execute_rotation": _with(s.RotationExecuteResultSerializer),
    "check_policy": _with(s.PolicyResultSerializer),
    "check_drift": _with(s.DriftResultSerializer),
    "validate_config": _with(c.ValidationResultSerializer),
    "render_config": _with(c.ConfigRenderResultSerializer),
}


def answer(job: JobRecord) -> tuple[int, dict[str, Any]] | None:
    """The status and body the synchronous call answers, once the job has ended."""
    if not job.finished:
        return None
    if job.legacy is not None:
        return int(job.legacy["status"]), job.legacy["body"]
    if job.failure is not None:
        return failure_answer(job.failure.get("code", "internal_error"), job.failure.get("message"))
    return 200, RENDER[job.operation](job.result)


class JobProgressSerializer(serializers.Serializer):  # type: ignore[type-arg]
    done = serializers.IntegerField(help_text="Secrets done.")
    total = serializers.IntegerField(allow_null=True, help_text="Secrets to do; null until the operation knows.")


class JobSummarySerializer(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.UUIDField()
    operation = serializers.ChoiceField(choices=sorted(OPERATIONS))
    state = serializers.ChoiceField(choices=list(STATES.values()))
    progress = serializers.SerializerMethodField()
    actor = serializers.CharField(allow_null=True, help_text="Who asked: the key's name, or `scheduler`.")
    project = serializers.CharField(help_text="The project it runs in (`default`: SERVICE_CONFIG's).")
    params = serializers.DictField(help_text="The request as its audit row shows it: names and flags, never values.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    status = serializers.SerializerMethodField(
        help_text="Once ended: the HTTP status the synchronous call answers.")

    @extend_schema_field(JobProgressSerializer)
    def get_progress(self, job: JobRecord) -> dict[str, Any]:
        return {"done": job.done, "total": job.total}

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_status(self, job: JobRecord) -> int | None:
        answered = answer(job)
        return answered[0] if answered else None


class JobSerializer(JobSummarySerializer):
    result = serializers.SerializerMethodField(
        help_text="Once ended: the body the synchronous call answers (the error body if it failed).")

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_result(self, job: JobRecord) -> dict[str, Any] | None:
        answered = answer(job)
        return answered[1] if answered else None


class JobQuerySerializer(StrictQuerySerializer):
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=50)
    offset = serializers.IntegerField(min_value=0, max_value=DB_INT_MAX, default=0)
    state = serializers.ChoiceField(choices=list(STATES.values()), required=False)
    operation = serializers.ChoiceField(choices=sorted(OPERATIONS), required=False)
    since = serializers.DateTimeField(
        required=False, default_timezone=UTC,
        help_text="Jobs created at or after this instant (ISO 8601; without a zone it is UTC).")
    project = serializers.CharField(
        required=False, max_length=63,
        help_text="Only the jobs of this project (`default`: SERVICE_CONFIG's). Under `/projects/{project}/` "
                  "the path's project is the filter.")


class JobPageSerializer(PageLinksSerializer):
    jobs = JobSummarySerializer(many=True)
    count = serializers.IntegerField(help_text="Jobs on this page.")
    page = serializers.IntegerField()
    per_page = serializers.IntegerField()
