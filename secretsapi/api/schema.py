"""drf-spectacular extensions: the API-key security scheme shown in /docs, response headers, and closed
request bodies."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema

from secretsapi.api.authentication import HEADER
from secretsapi.api.docs import HeaderedResponse


class ApiKeySchemeExtension(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "secretsapi.api.authentication.ApiKeyAuthentication"
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "header", "name": HEADER}


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's AutoSchema, writing a ``HeaderedResponse``'s headers into its response
    (``WWW-Authenticate`` on every 401, ``Cache-Control`` on the value read), and naming request
    components ``SyncRequest`` rather than ``SyncRequestRequest``."""

    def _get_serializer_name(self, serializer: Any, direction: Any, *args: Any, **kwargs: Any) -> str:
        name: str = super()._get_serializer_name(serializer, direction, *args, **kwargs)
        # COMPONENT_SPLIT_REQUEST appends "Request" to request components; ours already say so.
        return name.removesuffix("Request") if name.endswith("RequestRequest") else name

    def _get_response_for_code(self, serializer: Any, status_code: Any, *args: Any, **kwargs: Any) -> Any:
        response = super()._get_response_for_code(serializer, status_code, *args, **kwargs)  # type: ignore[no-untyped-call]
        if isinstance(serializer, HeaderedResponse) and serializer.headers:
            response["headers"] = {**response.get("headers", {}), **serializer.headers}
        return response


class StrictRequestExtension(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """A request body takes its declared fields only (the server answers 422 for any other)."""

    target_class = "secretsapi.api.serializers.strict.StrictRequestSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_basic_serializer(self.target, direction)
        schema["additionalProperties"] = False
        return schema
