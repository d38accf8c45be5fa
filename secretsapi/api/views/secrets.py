"""GET /secrets and GET /secrets/{secret_name}/status."""

from __future__ import annotations

from collections.abc import Sequence

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi.actions import secret_reads, workspaces
from secretsapi.api.authentication import actor
from secretsapi.api.body_cache import BodyCache
from secretsapi.api.docs import (
    EXAMPLE_SECRET,
    EXAMPLE_TIME,
    NO_STORE,
    HeaderedResponse,
    errors,
    response_example,
    secret_path_parameter,
)
from secretsapi.api.serializers.secrets import (
    SecretEntrySerializer,
    SecretListSerializer,
    SecretStatusListSerializer,
    SecretStatusSerializer,
    SecretValueSerializer,
    VarFilesQuerySerializer,
)
from secretsapi.api.serializers.strict import StrictQuerySerializer
from secretsapi.api.views.base import StrictAPIView
from secretsapi.service.results import SecretSummary

# The bytes come from the configured JSON renderer, so the body is the one a Response would carry.
_rendered: BodyCache[Sequence[SecretSummary]] = BodyCache()


def _render(secrets: Sequence[SecretSummary]) -> bytes:
    data = {"secrets": SecretEntrySerializer(secrets, many=True).data, "count": len(secrets)}
    body: bytes = JSONRenderer().render(data)
    return body


def workspace_of(request: Request, serializer: type[StrictQuerySerializer] = VarFilesQuerySerializer
                 ) -> workspaces.Workspace:
    """The workspace a GET names with its query (``var_files``, ``environment``)."""
    # Most reads name neither: the hot status read then skips the serializer.
    if not request.query_params:
        return workspaces.workspace()
    query = serializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    return workspaces.workspace(var_files=query.validated_data.get("var_files", ()),
                                environment=query.validated_data.get("environment"))


class SecretListView(StrictAPIView):
    query_serializer = VarFilesQuerySerializer
    @extend_schema(
        parameters=[VarFilesQuerySerializer],
        responses={
            200: OpenApiResponse(SecretListSerializer, description="The declared secrets."),
            **errors(400, 401, 404, 422, 500),
        },
        operation_id="list_secrets",
        summary="List secrets",
        description="Every secret the definition declares, in definition order: its kind, rotation period "
        "and the `<provider>/<kind>` of each target. Reads the definition only (no values, no lockfile). "
        "Fails with 404 when the definition or a variable file does not exist, 422 when the definition "
        "is invalid.",
        examples=[response_example("Two secrets", {"secrets": [
            {"name": EXAMPLE_SECRET, "kind": "random_password", "rotation_period": "30d", "targets": ["local/file"]},
            {"name": "api_token", "kind": "uuid", "rotation_period": "1y", "targets": ["local/file"]},
        ], "count": 2})],
        tags=["secrets"],
    )
    def get(self, request: Request) -> HttpResponse:
        secrets = secret_reads.list_secrets(workspace_of(request), actor=actor(request))
        return HttpResponse(_rendered.get(secrets, _render), content_type="application/json")


class SecretStatusView(StrictAPIView):
    query_serializer = VarFilesQuerySerializer

    @extend_schema(
        parameters=[secret_path_parameter("secret_name"), VarFilesQuerySerializer],
        responses={
            200: OpenApiResponse(SecretStatusSerializer, description="What the lockfile records."),
            **errors(400, 401, 404, 422, 500),
        },
        operation_id="get_secret_status",
        summary="Get a secret's status",
        description="What the lockfile records about one secret: when it was created, updated and last "
        "rotated, how its value last changed (`last_change`), how often it rotated, and its target ids. "
        "Never shows the value. An unknown or not yet "
        "generated secret is 200 with `exists: false`, never 404 (404 is a `var_files` entry that does "
        "not exist); 500 when the lockfile cannot be read.",
        examples=[
            response_example("Generated", {
                "name": EXAMPLE_SECRET, "exists": True, "created_at": EXAMPLE_TIME, "updated_at": EXAMPLE_TIME,
                "last_rotated": None, "rotation_count": 0, "targets": ["local/file/out/dev.env"],
                "last_change": "generated",
            }),
            response_example("Not generated yet", {"name": EXAMPLE_SECRET, "exists": False}),
        ],
        tags=["secrets"],
    )
    def get(self, request: Request, secret_name: str) -> HttpResponse:
        ws = workspace_of(request)
        status = secret_reads.secret_status(ws, secret_name, actor=actor(request))
        # Rendered here like the list: a DRF Response's template machinery was a tenth of
        # this endpoint's time, for the same bytes.
        body: bytes = JSONRenderer().render(SecretStatusSerializer(status).data)
        return HttpResponse(body, content_type="application/json")


class SecretStatusListView(StrictAPIView):
    query_serializer = VarFilesQuerySerializer

    @extend_schema(
        parameters=[VarFilesQuerySerializer],
        responses={
            200: OpenApiResponse(SecretStatusListSerializer, description="What the lockfile records, per secret."),
            **errors(400, 401, 404, 422, 500),
        },
        operation_id="get_secrets_status",
        summary="Get every secret's status",
        description="`GET /secrets/{secret_name}/status` for every declared secret at once, in definition "
        "order, with one audit row (`get_secrets_status`, naming the count): what `secretsctl --addr status` "
        "reads. Never shows a value.",
        examples=[
            response_example("One generated, one not", {"secrets": [
                {"name": EXAMPLE_SECRET, "exists": True, "created_at": EXAMPLE_TIME, "updated_at": EXAMPLE_TIME,
                 "last_rotated": None, "rotation_count": 0, "targets": ["local/file/out/dev.env"],
                 "last_change": "generated"},
                {"name": "api_token", "exists": False}], "count": 2}),
        ],
        tags=["secrets"],
    )
    def get(self, request: Request) -> HttpResponse:
        statuses = secret_reads.secret_statuses(workspace_of(request), actor=actor(request))
        data = {"secrets": [SecretStatusSerializer(status).data for status in statuses], "count": len(statuses)}
        return HttpResponse(JSONRenderer().render(data), content_type="application/json")


class SecretValueView(StrictAPIView):
    no_store = True
    query_serializer = VarFilesQuerySerializer

    @extend_schema(
        parameters=[secret_path_parameter("name"), VarFilesQuerySerializer],
        responses={
            200: HeaderedResponse(SecretValueSerializer, description="The value, never cached.", headers=NO_STORE),
            **errors(400, 401, 403, 404, 422, 500),
        },
        operation_id="read_secret_value",
        summary="Read a secret's value",
        description="The secret's definition, status and value, read back from its first readable "
        "target and checked against the lockfile (`verified`). Off unless the server sets "
        "`SERVICE_ALLOW_VALUE_READ=true` and an API key (403 otherwise). 404 when the secret is not "
        "defined; a secret not generated yet, or whose targets cannot be read, is 200 with `value` null "
        "and the reason in `messages`. Every read is audited (the value never is); the answer carries "
        "`Cache-Control: no-store`.",
        examples=[response_example("Read and verified", {
            "definition": {"name": EXAMPLE_SECRET, "kind": "random_password", "rotation_period": "30d",
                           "targets": ["local/file"], "one_time": False, "description": None},
            "status": {"name": EXAMPLE_SECRET, "exists": True, "created_at": EXAMPLE_TIME, "updated_at": EXAMPLE_TIME,
                       "last_rotated": None, "rotation_count": 0, "targets": ["local/file/out/dev.env"],
                       "last_change": "generated"},
            "value": "example-value-not-a-real-secret",
            "verified": True,
            "sources": {EXAMPLE_SECRET: "local/file/out/dev.env"},
            "messages": [f"{EXAMPLE_SECRET}: read from local/file/out/dev.env, matches the lockfile"],
        })],
        tags=["secrets"],
    )
    def get(self, request: Request, name: str) -> Response:
        revealed = secret_reads.reveal_secret(workspace_of(request), name, actor=actor(request))
        return Response(SecretValueSerializer(revealed).data)
