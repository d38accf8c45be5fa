"""POST /sync, /rotation/check, /rotation/execute, /policy/check and /drift/check."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi import actions
from secretsapi.api.authentication import actor
from secretsapi.api.docs import errors
from secretsapi.api.serializers import operations as s
from secretsapi.api.views.base import StrictAPIView

BODY_ERRORS = (400, 401, 404, 413, 415, 422, 500)


class SyncView(StrictAPIView):
    @extend_schema(request=s.SyncRequestSerializer,
                   responses={200: s.SyncResultSerializer, **errors(*BODY_ERRORS, 503)},
                   tags=["operations"])
    def post(self, request: Request) -> Response:
        body = s.SyncRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        q = body.validated_data
        result = actions.sync(
            actions.workspace(var_files=q["var_files"]), actor=actor(request),
            dry_run=q["dry_run"], force=q["force"], secret_name=q["secret_name"], repair=q["repair"],
        )
        return Response(s.SyncResultSerializer(result).data)


class RotationCheckView(StrictAPIView):
    @extend_schema(request=s.RotationCheckRequestSerializer,
                   responses={200: s.RotationCheckResultSerializer, **errors(*BODY_ERRORS)}, tags=["operations"])
    def post(self, request: Request) -> Response:
        body = s.RotationCheckRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        q = body.validated_data
        result = actions.check_rotation(
            actions.workspace(var_files=q["var_files"]), actor=actor(request), secret_name=q["secret_name"]
        )
        return Response(s.RotationCheckResultSerializer(result).data)


class RotationExecuteView(StrictAPIView):
    @extend_schema(request=s.RotationExecuteRequestSerializer,
                   responses={200: s.RotationExecuteResultSerializer, **errors(*BODY_ERRORS, 503)},
                   tags=["operations"])
    def post(self, request: Request) -> Response:
        body = s.RotationExecuteRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        q = body.validated_data
        result = actions.execute_rotation(
            actions.workspace(var_files=q["var_files"]), actor=actor(request),
            secret_name=q["secret_name"], force=q["force"],
        )
        return Response(s.RotationExecuteResultSerializer(result).data)


class PolicyCheckView(StrictAPIView):
    @extend_schema(request=s.PolicyCheckRequestSerializer,
                   responses={200: s.PolicyResultSerializer, **errors(*BODY_ERRORS)}, tags=["operations"])
    def post(self, request: Request) -> Response:
        body = s.PolicyCheckRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        q = body.validated_data
        result = actions.check_policy(
            actions.workspace(var_files=q["var_files"]), actor=actor(request), fail_on_warning=q["fail_on_warning"]
        )
        return Response(s.PolicyResultSerializer(result).data)


class DriftCheckView(StrictAPIView):
    @extend_schema(request=s.DriftCheckRequestSerializer,
                   responses={200: s.DriftResultSerializer, **errors(*BODY_ERRORS)}, tags=["operations"])
    def post(self, request: Request) -> Response:
        body = s.DriftCheckRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        q = body.validated_data
        result = actions.check_drift(
            actions.workspace(var_files=q["var_files"]), actor=actor(request), secret_name=q["secret_name"]
        )
        return Response(s.DriftResultSerializer(result).data)


class AgentSyncView(StrictAPIView):
    @extend_schema(
        request=s.AgentSyncRequestSerializer,
        responses={200: s.AgentSyncResultSerializer, **errors(*BODY_ERRORS, 503)},
        tags=["operations"],
        description="A sync for CI jobs and deploy hooks: the sync result plus an overall `status` "
        "and one outcome per secret. Repairs broken targets unless `repair` is false. Safe to repeat: once "
        "everything exists and every target holds its value it writes nothing.",
    )
    def post(self, request: Request) -> Response:
        body = s.AgentSyncRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        q = body.validated_data
        result = actions.agent_sync(
            actions.workspace(var_files=q["var_files"]), actor=actor(request),
            dry_run=q["dry_run"], force=q["force"], secret_name=q["secret_name"], repair=q["repair"],
        )
        data = {**s.SyncResultSerializer(result.sync).data, "status": result.status,
                "outcomes": s.SecretOutcomeSerializer(result.outcomes, many=True).data}
        return Response(data)
