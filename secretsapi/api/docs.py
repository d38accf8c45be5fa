"""OpenAPI helpers shared by the views: the error responses every endpoint may send."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse

from secretsapi.api.serializers.common import ErrorSerializer


def errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """Error responses (the one error body) for the given statuses."""
    descriptions = {
        400: "Malformed request (the body is not JSON, or an input is unacceptable).",
        401: "Missing or invalid API key; carries WWW-Authenticate.",
        403: "Forbidden.",
        404: "The definition file or the named secret is not found.",
        413: "The request body is too large.",
        415: "The request body is not JSON.",
        422: "The request failed validation (wrong types, out-of-range values).",
        500: "Server-side failure (unreadable definition or lockfile, failed operation).",
        503: "Another operation holds the lock for too long; retry.",
    }
    return {s: OpenApiResponse(ErrorSerializer, description=descriptions[s]) for s in statuses}
