"""OpenAPI helpers shared by the views: error responses, response headers and the examples' values."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse

from secretsapi.api.authentication import WWW_AUTHENTICATE
from secretsapi.api.serializers.common import ErrorSerializer

# Examples name secrets of examples/Secretfile.yml, so "Try it out" against `make serve` works.
EXAMPLE_SECRET = "db_password"  # noqa: S105  # a secret's name, not a value
EXAMPLE_TIME = "2026-01-15T09:30:00+00:00"


class HeaderedResponse(OpenApiResponse):
    """An OpenApiResponse that also declares response headers (``{name: {description, schema}}``);
    ``secretsapi.api.schema.AutoSchema`` writes them into the response object."""

    def __init__(self, response: Any = None, description: str = "", examples: list[OpenApiExample] | None = None,
                 headers: dict[str, dict[str, Any]] | None = None) -> None:
        super().__init__(response, description, examples)
        self.headers = headers or {}


def header(description: str, example: str) -> dict[str, Any]:
    return {"description": description, "schema": {"type": "string", "example": example}}


NO_STORE = {"Cache-Control": header("Always `no-store`: no cache keeps the answer.", "no-store")}
AUTH_CHALLENGE = {"WWW-Authenticate": header("The schemes to authenticate with: the `X-API-Key` header, or "
                                             "`Authorization: Bearer`.",
                                             WWW_AUTHENTICATE)}

ERROR_DESCRIPTIONS = {
    400: "Malformed request: the body is not JSON, or an input is unacceptable (a `var_files` path that "
         "leaves the definition's folder, an unreadable variable file).",
    401: "Missing or invalid API key, a malformed `Authorization: Bearer` header, or one naming another key "
         "than `X-API-Key` beside it. Carries `WWW-Authenticate`; send the key in `X-API-Key` or as "
         "`Authorization: Bearer <key>`.",
    403: "Forbidden: the server does not allow this (see the operation's description).",
    404: "The definition file, a variable file or the named secret is not found.",
    409: "Conflict: the name is in use already.",
    413: "The request body is too large.",
    415: "The request body is not JSON (send `Content-Type: application/json`).",
    422: "The request failed validation (an unknown field or parameter, a wrong type, a value out of "
         "range), or the definition is invalid (`error` `Definition invalid`, every problem named in the "
         "detail). Nothing was performed.",
    429: "Too many jobs (`too_many_jobs`): this key (SERVICE_JOBS_PER_KEY), the project (SERVICE_JOBS_PER_PROJECT, "
         "the detail naming it) or the server (SERVICE_JOBS_MAX) has as many jobs queued or running as allowed. "
         "Nothing was queued; retry after `Retry-After` seconds.",
    500: "Server-side failure: the lockfile cannot be read, or the operation failed "
         "(`error` `Lockfile not writable`: the lockfile cannot be written; the detail says whether a "
         "target was changed).",
    503: "Another operation held the definition's lock for too long (`lock_timeout`), or no job worker is "
         "running to take the job (`no_worker`: answered at once, nothing was queued).",
    507: "The disk (or quota) holding the lockfile is full. The new lockfile is written before any "
         "target, so nothing was changed.",
}

ERROR_EXAMPLES = {
    400: ("Bad request", "variable file '../vars.yml' is outside the definition folder"),
    401: ("Unauthorized", "Invalid API key."),
    403: ("Forbidden", "Reading secret values is disabled; set SERVICE_ALLOW_VALUE_READ=true to enable it."),
    404: ("Not found", "secret 'db_pasword' is not defined in the definition file"),
    409: ("Conflict", "A project named 'payments' exists already (project_exists)."),
    413: ("Payload too large", "The request body is too large."),
    415: ("Unsupported media type", 'Unsupported media type "text/plain" in request.'),
    422: ("Unprocessable entity", "dry_run: Must be a valid boolean."),
    429: ("Too many requests", "Too many jobs (too_many_jobs): this key has 8 jobs queued or running already "
                               "(SERVICE_JOBS_PER_KEY); retry once one has ended."),
    500: ("Internal server error", "An unexpected error occurred; the server log has the details."),
    503: ("Service unavailable", "timed out after 30 s waiting for the lockfile lock /srv/app/.gitsecrets.lock.lck"),
    507: ("Insufficient storage",
          "lockfile /srv/app/.gitsecrets.lock cannot be written (the disk is full); no target was changed"),
}


def errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """Error responses (the one error body, with an example) for the given statuses; 401 declares
    its ``WWW-Authenticate`` header."""
    responses: dict[int, OpenApiResponse] = {}
    for status in statuses:
        title, detail = ERROR_EXAMPLES[status]
        example = OpenApiExample(title, value={"error": title, "detail": detail, "timestamp": EXAMPLE_TIME},
                                 response_only=True, status_codes=[str(status)])
        responses[status] = HeaderedResponse(ErrorSerializer, description=ERROR_DESCRIPTIONS[status],
                                             examples=[example], headers=AUTH_CHALLENGE if status == 401 else None)
    return responses


def request_example(name: str, value: dict[str, Any], summary: str = "") -> OpenApiExample:
    return OpenApiExample(name, value=value, summary=summary or name, request_only=True)


def response_example(name: str, value: Any) -> OpenApiExample:
    return OpenApiExample(name, value=value, response_only=True, status_codes=["200"])


def secret_path_parameter(name: str) -> OpenApiParameter:
    """The secret named in the path, with a name from the example definition to try."""
    return OpenApiParameter(name, OpenApiTypes.STR, OpenApiParameter.PATH,
                            description="The secret's `name` in the definition.",
                            examples=[OpenApiExample(EXAMPLE_SECRET, value=EXAMPLE_SECRET)])
