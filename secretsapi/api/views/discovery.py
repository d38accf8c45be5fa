"""What the service offers: generators, secret types, target kinds and providers."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi.actions import discovery
from secretsapi.api.authentication import actor
from secretsapi.api.docs import errors, response_example
from secretsapi.api.serializers import discovery as d
from secretsapi.api.serializers.secrets import EnvironmentQuerySerializer
from secretsapi.api.views.base import StrictAPIView
from secretsapi.api.views.secrets import workspace_of

OPTION = {"name": "length", "type": "integer", "default": 32, "description": "Number of characters."}


class GeneratorListView(StrictAPIView):
    @extend_schema(
        responses={
            200: OpenApiResponse(d.GeneratorListSerializer, description="The generator kinds."),
            **errors(401, 500),
        },
        operation_id="list_generators",
        summary="List generators",
        description="The generator kinds a secret's `kind` may name, with their options (`config` keys) "
        "and defaults. Fixed by this service's version: reads no definition.",
        examples=[response_example("One generator", {"generators": [{
            "kind": "random_password", "description": "Random password with at least one character of every "
            "enabled class.", "options": [OPTION]}], "count": 1})],
        tags=["discovery"],
    )
    def get(self, request: Request) -> Response:
        generators = discovery.list_generators(actor=actor(request))
        return Response(d.GeneratorListSerializer({"generators": generators, "count": len(generators)}).data)


class SecretTypeListView(StrictAPIView):
    query_serializer = EnvironmentQuerySerializer

    @extend_schema(
        parameters=[EnvironmentQuerySerializer],
        responses={
            200: OpenApiResponse(d.SecretTypeListSerializer, description="The secret types."),
            **errors(401, 404, 422, 500),
        },
        operation_id="list_secret_types",
        summary="List secret types",
        description="Every generator kind, plus the `templates.<name>` types the served definition "
        "declares, with their fields. Without a usable definition it lists the generator kinds only.",
        examples=[response_example("One type", {"secret_types": [{
            "kind": "random_password", "description": "Random password with at least one character of every "
            "enabled class.", "options": [OPTION], "template": False, "fields": []}], "count": 1})],
        tags=["discovery"],
    )
    def get(self, request: Request) -> Response:
        types = discovery.list_secret_types(workspace_of(request, EnvironmentQuerySerializer), actor=actor(request))
        return Response(d.SecretTypeListSerializer({"secret_types": types, "count": len(types)}).data)


class TargetKindListView(StrictAPIView):
    @extend_schema(
        responses={
            200: OpenApiResponse(d.TargetKindListSerializer, description="The target kinds."),
            **errors(401, 500),
        },
        operation_id="list_target_kinds",
        summary="List target kinds",
        description="The target kinds (`<provider>/<kind>`) a secret may be written to, with their "
        "`config` keys and defaults, and the JSON Schema of a `config`. Fixed by this service's version: reads "
        "no definition.",
        examples=[response_example("One target kind", {"targets": [{
            "type": "local/file", "description": "A key in a local file inside the allowed target roots, "
            "written atomically (mode 0600 when new).",
            "config": [{"name": "path", "type": "string", "default": None, "description": "file path, relative to "
                        "the definition folder or absolute, inside SERVICE_TARGET_ROOTS"}],
            "schema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "local/file target config",
                       "type": "object", "properties": {"path": {"type": "string", "minLength": 1}},
                       "required": ["path"]}}], "count": 1})],
        tags=["discovery"],
    )
    def get(self, request: Request) -> Response:
        targets = discovery.list_targets(actor=actor(request))
        return Response(d.TargetKindListSerializer({"targets": targets, "count": len(targets)}).data)


class ProviderListView(StrictAPIView):
    query_serializer = EnvironmentQuerySerializer

    @extend_schema(
        parameters=[EnvironmentQuerySerializer],
        responses={
            200: OpenApiResponse(d.ProviderListSerializer, description="Provider kinds, and the declared providers."),
            **errors(401, 404, 422, 500),
        },
        operation_id="list_providers",
        summary="List providers",
        description="The provider kinds this service supports, with their settings and auth kinds, and the "
        "providers the served definition declares (setting names only: anything credential-like is "
        "`***`). Without a usable definition `declared` is empty.",
        examples=[response_example("Local only", {"providers": [{
            "kind": "local", "description": "Files inside the allowed target roots.", "config": [],
            "auth_kinds": [], "auth_config": [], "targets": ["local/file", "local/template"],
            "schema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "local provider",
                       "type": "object", "properties": {"kind": {"const": "local"}}}}],
            "declared": [], "count": 1})],
        tags=["discovery"],
    )
    def get(self, request: Request) -> Response:
        ws = workspace_of(request, EnvironmentQuerySerializer)
        kinds, declared = discovery.list_providers(ws, actor=actor(request))
        body = {"providers": kinds, "declared": declared, "count": len(kinds)}
        return Response(d.ProviderListSerializer(body).data)
