"""What the service offers: generators, secret types, target kinds and providers."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi import actions
from secretsapi.api.authentication import actor
from secretsapi.api.docs import errors
from secretsapi.api.serializers import discovery as d
from secretsapi.api.views.base import StrictAPIView


class GeneratorListView(StrictAPIView):
    @extend_schema(responses={200: d.GeneratorListSerializer, **errors(401, 500)}, tags=["discovery"],
                   description="Generator kinds with their options and defaults.")
    def get(self, request: Request) -> Response:
        generators = actions.list_generators(actor=actor(request))
        return Response(d.GeneratorListSerializer({"generators": generators, "count": len(generators)}).data)


class SecretTypeListView(StrictAPIView):
    @extend_schema(responses={200: d.SecretTypeListSerializer, **errors(401, 500)}, tags=["discovery"],
                   description="Every generator kind, plus the templates the definition's secrets use.")
    def get(self, request: Request) -> Response:
        types = actions.list_secret_types(actions.workspace(), actor=actor(request))
        return Response(d.SecretTypeListSerializer({"secret_types": types, "count": len(types)}).data)


class TargetKindListView(StrictAPIView):
    @extend_schema(responses={200: d.TargetKindListSerializer, **errors(401, 500)}, tags=["discovery"],
                   description="Target kinds with their configuration keys and defaults.")
    def get(self, request: Request) -> Response:
        targets = actions.list_targets(actor=actor(request))
        return Response(d.TargetKindListSerializer({"targets": targets, "count": len(targets)}).data)


class ProviderListView(StrictAPIView):
    @extend_schema(responses={200: d.ProviderListSerializer, **errors(401, 500)}, tags=["discovery"],
                   description="Provider kinds, and the providers declared in the definition (no credentials).")
    def get(self, request: Request) -> Response:
        kinds, declared = actions.list_providers(actions.workspace(), actor=actor(request))
        body = {"providers": kinds, "declared": declared, "count": len(kinds)}
        return Response(d.ProviderListSerializer(body).data)
