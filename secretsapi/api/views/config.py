"""POST /config/validate."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from secretsapi import actions
from secretsapi.api.docs import errors
from secretsapi.api.errors import BadRequest
from secretsapi.api.serializers import operations as s


class ConfigValidateView(APIView):
    @extend_schema(
        request=s.ConfigValidateRequestSerializer,
        responses={200: s.ValidationResultSerializer, **errors(400, 401, 413, 415, 500)},
        tags=["config"],
        description="An invalid definition is a 200 with `valid: false`; a `config` that is "
        "missing or not a JSON object is 400.",
    )
    def post(self, request: Request) -> Response:
        data = request.data
        config = data.get("config") if isinstance(data, dict) else None
        if not isinstance(config, dict):
            raise BadRequest("`config` must be a JSON object holding the definition.")
        report = actions.validate_config(config, actor=request.user.audit_name)
        return Response(s.ValidationResultSerializer(report).data)
