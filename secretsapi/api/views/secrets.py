"""GET /secrets and GET /secrets/{secret_name}/status."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from secretsapi import actions
from secretsapi.api.docs import errors
from secretsapi.api.serializers import extras as x
from secretsapi.api.serializers.secrets import (
    SecretEntrySerializer,
    SecretListSerializer,
    SecretStatusSerializer,
)
from secretsapi.service.results import SecretSummary

# The secret list is the same tuple while the definition is unchanged (the engine caches it),
# so its rendered body is kept with it: serializing and encoding 1,000 entries costs ~20 ms,
# this identity check nothing. The tuple is held, so its id is not reused while cached. The
# bytes come from the configured JSON renderer, so the body is the one a Response would carry.
# Rendered once per list: threads that miss together wait for the first (20,000 entries are
# ~40 MB of serializer output while they render; four at once set a worker's peak memory).
_rendered: tuple[Sequence[SecretSummary], bytes] | None = None
_render_lock = threading.Lock()


def _list_body(secrets: Sequence[SecretSummary]) -> bytes:
    global _rendered
    cached = _rendered
    if cached is not None and cached[0] is secrets:
        return cached[1]
    with _render_lock:
        cached = _rendered
        if cached is not None and cached[0] is secrets:
            return cached[1]
        _rendered = None  # the previous list's body is of no further use
        data = {"secrets": SecretEntrySerializer(secrets, many=True).data, "count": len(secrets)}
        body: bytes = JSONRenderer().render(data)
        _rendered = (secrets, body)
    return body


class SecretListView(APIView):
    @extend_schema(responses={200: SecretListSerializer, **errors(401, 404, 500)}, tags=["secrets"],
                   operation_id="secrets_list")
    def get(self, request: Request) -> HttpResponse:
        secrets = actions.list_secrets(actions.workspace(), actor=request.user.audit_name)
        return HttpResponse(_list_body(secrets), content_type="application/json")


class SecretStatusView(APIView):
    @extend_schema(
        responses={200: SecretStatusSerializer, **errors(401, 500)},
        tags=["secrets"],
        description="An unknown or not yet generated secret is 200 with `exists: false`, never 404.",
    )
    def get(self, request: Request, secret_name: str) -> Response:
        status = actions.secret_status(actions.workspace(), secret_name, actor=request.user.audit_name)
        return Response(SecretStatusSerializer(status).data)


class SecretValueView(APIView):
    @extend_schema(
        responses={200: x.SecretValueSerializer, **errors(401, 403, 404, 500)},
        operation_id="secret_value_retrieve",
        tags=["secrets"],
        description="The secret's definition, status and value, read back from its first readable "
        "target and checked against the lockfile. Off unless the server sets "
        "`SERVICE_ALLOW_VALUE_READ=true` and an API key (403 otherwise). Every read is audited; "
        "the response is never cached.",
    )
    def get(self, request: Request, name: str) -> Response:
        revealed = actions.reveal_secret(actions.workspace(), name, actor=request.user.audit_name)
        response = Response(x.SecretValueSerializer(revealed).data)
        response["Cache-Control"] = "no-store"
        return response
