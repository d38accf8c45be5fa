"""POST /config/validate."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi import actions
from secretsapi.api.authentication import actor
from secretsapi.api.docs import errors
from secretsapi.api.errors import BadRequest
from secretsapi.api.serializers import config as c
from secretsapi.api.views.base import StrictAPIView


class ConfigValidateView(StrictAPIView):
    @extend_schema(
        request=c.ConfigValidateRequestSerializer,
        responses={200: c.ValidationResultSerializer, **errors(400, 401, 413, 415, 422, 500)},
        tags=["config"],
        description="An invalid definition is a 200 with `valid: false`; a `config` that is "
        "missing or not a JSON object is 400.",
    )
    def post(self, request: Request) -> Response:
        if not isinstance(request.data, dict):
            raise BadRequest("`config` must be a JSON object holding the definition.")
        body = c.ConfigValidateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        report = actions.validate_config(body.validated_data["config"], actor=actor(request))
        return Response(c.ValidationResultSerializer(report).data)


class ConfigRenderView(StrictAPIView):
    @extend_schema(
        request=c.ConfigRenderRequestSerializer,
        responses={200: c.ConfigRenderResultSerializer, **errors(400, 401, 404, 413, 415, 422, 500)},
        tags=["config"],
        description="The definition with `var_files` and `variables` applied, as a sync would see it. "
        "Static secret values and values from the server's environment are redacted.",
    )
    def post(self, request: Request) -> Response:
        body = c.ConfigRenderRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        q = body.validated_data
        result = actions.render_config(
            actions.workspace(var_files=q["var_files"]), actor=actor(request), variables=q["variables"]
        )
        return Response(c.ConfigRenderResultSerializer(result).data)
