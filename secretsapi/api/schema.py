"""drf-spectacular extensions: the API-key security scheme shown in /docs, and closed request bodies."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerExtension

from secretsapi.api.authentication import HEADER


class ApiKeySchemeExtension(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "secretsapi.api.authentication.ApiKeyAuthentication"
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "header", "name": HEADER}


class StrictRequestExtension(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """A request body takes its declared fields only (the server answers 422 for any other)."""

    target_class = "secretsapi.api.serializers.strict.StrictRequestSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_basic_serializer(self.target, direction)
        schema["additionalProperties"] = False
        return schema
