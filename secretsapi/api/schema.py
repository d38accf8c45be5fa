"""drf-spectacular extensions: the API-key security scheme shown in /docs."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension

from secretsapi.api.authentication import HEADER


class ApiKeySchemeExtension(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "secretsapi.api.authentication.ApiKeyAuthentication"
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "header", "name": HEADER}
