"""GET /secrets and GET /secrets/{secret_name}/status."""

from __future__ import annotations

from collections.abc import Sequence

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi import actions
from secretsapi.api.authentication import actor
from secretsapi.api.body_cache import BodyCache
from secretsapi.api.docs import errors
from secretsapi.api.serializers.secrets import (
    SecretEntrySerializer,
    SecretListSerializer,
    SecretStatusSerializer,
    SecretValueSerializer,
    VarFilesQuerySerializer,
)
from secretsapi.api.views.base import StrictAPIView
from secretsapi.service.results import SecretSummary

# The bytes come from the configured JSON renderer, so the body is the one a Response would carry.
_rendered: BodyCache[Sequence[SecretSummary]] = BodyCache()


def _render(secrets: Sequence[SecretSummary]) -> bytes:
    data = {"secrets": SecretEntrySerializer(secrets, many=True).data, "count": len(secrets)}
    body: bytes = JSONRenderer().render(data)
    return body


def _var_files(request: Request) -> list[str]:
    # Most reads name no var file: the hot status read then skips the serializer.
    if "var_files" not in request.query_params:
        return []
    query = VarFilesQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    var_files: list[str] = query.validated_data["var_files"]
    return var_files


class SecretListView(StrictAPIView):
    query_serializer = VarFilesQuerySerializer

    @extend_schema(parameters=[VarFilesQuerySerializer],
                   responses={200: SecretListSerializer, **errors(400, 401, 404, 422, 500)}, tags=["secrets"],
                   operation_id="secrets_list")
    def get(self, request: Request) -> HttpResponse:
        secrets = actions.list_secrets(actions.workspace(var_files=_var_files(request)), actor=actor(request))
        return HttpResponse(_rendered.get(secrets, _render), content_type="application/json")


class SecretStatusView(StrictAPIView):
    query_serializer = VarFilesQuerySerializer

    @extend_schema(
        parameters=[VarFilesQuerySerializer],
        responses={200: SecretStatusSerializer, **errors(400, 401, 404, 422, 500)},
        tags=["secrets"],
        description="An unknown or not yet generated secret is 200 with `exists: false`, never 404 "
        "(404 is a `var_files` entry that does not exist).",
    )
    def get(self, request: Request, secret_name: str) -> HttpResponse:
        ws = actions.workspace(var_files=_var_files(request))
        status = actions.secret_status(ws, secret_name, actor=actor(request))
        # Rendered here like the list: a DRF Response's template machinery was a tenth of
        # this endpoint's time, for the same bytes.
        body: bytes = JSONRenderer().render(SecretStatusSerializer(status).data)
        return HttpResponse(body, content_type="application/json")


class SecretValueView(StrictAPIView):
    query_serializer = VarFilesQuerySerializer

    @extend_schema(
        parameters=[VarFilesQuerySerializer],
        responses={200: SecretValueSerializer, **errors(400, 401, 403, 404, 422, 500)},
        operation_id="secret_value_retrieve",
        tags=["secrets"],
        description="The secret's definition, status and value, read back from its first readable "
        "target and checked against the lockfile. Off unless the server sets "
        "`SERVICE_ALLOW_VALUE_READ=true` and an API key (403 otherwise). Every read is audited; "
        "the response is never cached.",
    )
    def get(self, request: Request, name: str) -> Response:
        revealed = actions.reveal_secret(actions.workspace(var_files=_var_files(request)), name, actor=actor(request))
        response = Response(SecretValueSerializer(revealed).data)
        response["Cache-Control"] = "no-store"
        return response
