"""drf-spectacular extensions: the API-key security scheme shown in /docs, response headers, and closed
request bodies."""

from __future__ import annotations

import copy
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema

from apikeys.keys import insecure_mode
from secretsapi.api.authentication import BEARER, HEADER
from secretsapi.api.docs import HeaderedResponse
from secretsapi.api.serializers.strict import StrictRequestSerializer


class ApiKeySchemeExtension(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """The one class's two ways of sending the same key: either one (OR), not both."""

    target_class = "secretsapi.api.authentication.ApiKeyAuthentication"
    name = ["ApiKeyAuth", "BearerAuth"]  # noqa: RUF012 - drf-spectacular reads a list here

    def get_security_requirement(self, auto_schema: Any) -> list[dict[str, list[Any]]]:
        return [{name: []} for name in self.name]

    def get_security_definition(self, auto_schema: Any) -> list[dict[str, str]]:
        return [
            {"type": "apiKey", "in": "header", "name": HEADER},
            {"type": "http", "scheme": BEARER.lower(),
             "description": f"The same key as `Authorization: {BEARER} <key>` (for clients that cannot send "
             f"`{HEADER}`, such as Prometheus). Sent with `{HEADER}`, both must name the same key."},
        ]


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's AutoSchema, writing a ``HeaderedResponse``'s headers into its response
    (``WWW-Authenticate`` on every 401, ``Cache-Control`` on the value read), and naming request
    components ``SyncRequest`` rather than ``SyncRequestRequest``."""

    def _get_serializer_name(self, serializer: Any, direction: Any, *args: Any, **kwargs: Any) -> str:
        if isinstance(serializer, StrictRequestSerializer):
            serializer = whole(serializer)  # a PATCH body is validated whole: no "Patched" component
        name: str = super()._get_serializer_name(serializer, direction, *args, **kwargs)
        # COMPONENT_SPLIT_REQUEST appends "Request" to request components; ours already say so.
        return name.removesuffix("Request") if name.endswith("RequestRequest") else name

    def _get_response_for_code(self, serializer: Any, status_code: Any, *args: Any, **kwargs: Any) -> Any:
        response = super()._get_response_for_code(serializer, status_code, *args, **kwargs)  # type: ignore[no-untyped-call]
        if isinstance(serializer, HeaderedResponse) and serializer.headers:
            response["headers"] = {**response.get("headers", {}), **serializer.headers}
        return response


class StrictRequestExtension(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """A request body takes its declared fields only (the server answers 422 for any other), and
    its required fields are required on PATCH too: drf-spectacular maps a PATCH body as partial
    (every field optional, as DRF's ``partial=True``), but a view here validates its body whole
    (``PATCH /webhooks/{id}`` needs ``enabled``), so the schema says what the server checks."""

    target_class = "secretsapi.api.serializers.strict.StrictRequestSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_basic_serializer(whole(self.target), direction)
        schema["additionalProperties"] = False
        return schema


def whole(serializer: Any) -> Any:
    """``serializer`` as the view validates it: never partial."""
    if not getattr(serializer, "partial", False):
        return serializer
    serializer = copy.copy(serializer)
    serializer.partial = False
    return serializer


# --- Postprocessing: what every operation may answer, and what no string may hold -------------
# Text fields refuse NUL (422, Django's ProhibitNullCharactersValidator), a rule drf-spectacular
# does not write into the schema; the pattern says it for every request string without one.
NO_NUL = "^[^\\x00]*$"
# Answered before any view runs, so they are declared here for every operation.
INSECURE_400 = ("In insecure mode (no API key configured): the `Host` header does not name this machine "
                "(a DNS-rebinding page).")
INSECURE_403 = ("In insecure mode (no API key configured): the client is not on this machine, or a page of "
                "another origin sends a write.")
URI_TOO_LONG = ("The request line (path and query) is longer than the server accepts (4094 bytes). Behind the "
                "proxy of deploy/nginx the error body; from gunicorn itself, its HTML page.")


def without_project_copies(endpoints: list[Any], **kwargs: Any) -> list[Any]:
    """The endpoints without their ``/projects/{project}/`` copies (the same operations again,
    described on ``GET /projects``)."""
    return [endpoint for endpoint in endpoints if not endpoint[0].startswith("/projects/{project}/")]


def declare_server_answers(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: 414 and insecure mode's 400 and 403 on every operation,
    and ``NO_NUL`` on every request string (bodies and parameters) that has no pattern.

    Served by a server in insecure mode (``/openapi.json``), the key is optional (``{}`` beside the
    key scheme): that server answers without one. Written offline (``manage.py spectacular``, no
    request), the schema states the keyed contract."""
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    optional_key = request is not None and insecure_mode()
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if optional_key and operation.get("security") and {} not in operation["security"]:
                operation["security"] = [*operation["security"], {}]
            responses = operation.setdefault("responses", {})
            for status, sentence in (("400", INSECURE_400), ("403", INSECURE_403)):
                if status in responses:
                    if sentence not in responses[status].get("description", ""):
                        responses[status]["description"] = f"{responses[status]['description']} {sentence}".strip()
                else:
                    responses[status] = {"description": sentence, "content": error}
            responses["414"] = {"description": URI_TOO_LONG,
                                "content": {**error, "text/html": {"schema": {"type": "string"}}}}
            for parameter in operation.get("parameters", []):
                _forbid_nul(parameter.get("schema", {}))
    for name, component in result.get("components", {}).get("schemas", {}).items():
        # COMPONENT_SPLIT_REQUEST gives every request body its own component, named ...Request.
        if name.endswith("Request"):
            _forbid_nul(component)
    return result


def _forbid_nul(schema: dict[str, Any]) -> None:
    if schema.get("type") == "string" and "pattern" not in schema and "enum" not in schema \
            and "format" not in schema:
        schema["pattern"] = NO_NUL
    for child in (*schema.get("properties", {}).values(), schema.get("items"), schema.get("additionalProperties")):
        if isinstance(child, dict):
            _forbid_nul(child)
