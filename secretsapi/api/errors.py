"""One error body, ``{error, detail, timestamp}``, for every 4xx and 5xx the service sends."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from rest_framework import exceptions, status
from rest_framework.response import Response

from audit.recorder import record
from jobs.errors import NoWorker, TooManyJobs
from projects.errors import EnvironmentRefused, ProjectExists, ProjectNotFound, ProjectRefused
from secretsapi import database_errors
from secretsapi.actions.webhooks import WebhookNotFound, WebhookRefused
from secretsapi.api.authentication import header_principal, request_principal
from secretsapi.api.parsers import RefusedBody
from secretsapi.api.project_asked import project_asked
from secretsapi.service import errors
from secretsapi.service.errors import ServiceError

logger = logging.getLogger("secretsapi.errors")

TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    406: "Not acceptable",
    409: "Conflict",
    411: "Length required",
    413: "Payload too large",
    415: "Unsupported media type",
    422: "Unprocessable entity",
    429: "Too many requests",
    500: "Internal server error",
    503: "Service unavailable",
    507: "Insufficient storage",
}

# Engine errors -> HTTP status, by class: a renamed or new error class fails the test that
# every ServiceError subclass is listed, rather than silently becoming a 500.
SERVICE_STATUS: dict[type[ServiceError], int] = {
    errors.DefinitionNotFound: 404,
    # The definition's author's mistake, named in the detail: never a 500, which says the server failed.
    errors.DefinitionInvalid: 422,
    errors.SecretNotDefined: 404,
    errors.EnvironmentNotFound: 404,
    errors.VarFileNotFound: 404,
    errors.VarFileNotDeclared: 404,
    errors.VarFileInvalid: 400,
    errors.LockfileUnreadable: 500,
    errors.LockEntryCorrupted: 500,
    errors.GeneratorError: 500,
    errors.TargetError: 500,
    errors.ValueReadDisabled: 403,
    errors.LockTimeout: 503,
    errors.LockLost: 503,
    errors.LockfileUnwritable: 500,
    errors.LockfileStorageFull: 507,
    errors.WorkerDied: 503,
    NoWorker: 503,
    TooManyJobs: 429,
    WebhookNotFound: 404,
    WebhookRefused: 422,
    ProjectNotFound: 404,
    ProjectRefused: 422,
    ProjectExists: 409,
    EnvironmentRefused: 404,
}

_SERVICE_CODES: dict[str, type[ServiceError]] = {cls.code: cls for cls in SERVICE_STATUS}

# Engine errors whose ``error`` names them better than their status's title does.
SERVICE_TITLES: dict[type[ServiceError], str] = {
    errors.DefinitionInvalid: "Definition invalid",
    errors.LockfileUnwritable: "Lockfile not writable",
    errors.LockfileStorageFull: "Insufficient storage",
    NoWorker: "No job worker",
}


def service_title(exc: Exception) -> str | None:
    """The ``error`` of an engine error listed in SERVICE_TITLES (most specific class first)."""
    for cls in type(exc).__mro__:
        if cls in SERVICE_TITLES:
            return SERVICE_TITLES[cls]
    return None


def service_status(exc: ServiceError) -> int:
    """The status of the most specific listed class in ``exc``'s ancestry (500 if none)."""
    for cls in type(exc).__mro__:
        if cls in SERVICE_STATUS:
            return SERVICE_STATUS[cls]
    return 500


GENERIC_500 = "An unexpected error occurred; the server log has the details."
DATABASE_TITLE = "Database unavailable"
DATABASE_UNAVAILABLE = "The database cannot be reached (database_unavailable); try again later."


class BadRequest(exceptions.APIException):
    """A request that is well-formed JSON but not an acceptable input (400, not 422)."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "Bad request."
    default_code = "bad_request"


def error_body(status_code: int, detail: str) -> dict[str, str]:
    return {
        "error": TITLES.get(status_code, "Error"),
        "detail": detail,
        "timestamp": datetime.now(UTC).isoformat(),
    }


# Refusals of authenticated requests that get an audit row of their own (401s have theirs).
AUDITED_REFUSALS = frozenset({400, 403, 404, 413, 415, 422})


def record_refusal(user: str | None, method: str | None, path: str, status_code: int, reason: str,
                   project: str | None = None) -> None:
    """The failed row of a refused request: the status and a reason code, never the body; and
    the project it asked for, when that project exists (see ``project_asked``)."""
    record(action="request_refused", resource=path, user=user, success=False,
           details={"status": status_code, "reason": reason, "method": method or ""},
           context={"project": project} if project is not None else None)


def exception_handler(exc: Exception, context: Mapping[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER: every exception a view raises ends here."""
    status_code, body = error_answer(exc)
    request = context.get("request")
    # An action that failed wrote its own row (``audited`` marks the exception): not twice.
    if status_code in AUDITED_REFUSALS and request is not None and not getattr(exc, "audited", False):
        principal = request_principal(request)
        if principal is not None:
            record_refusal(principal.audit_name, request.method, request.path, status_code, reason_code(exc),
                           project_asked(context.get("view")))
    response = Response(body, status=status_code)
    auth_header = getattr(exc, "auth_header", None)
    if auth_header:
        response["WWW-Authenticate"] = auth_header
    wait = getattr(exc, "wait", None)
    if wait:
        response["Retry-After"] = str(int(wait))
    return response


def _database_title(exc: Exception) -> str | None:
    return DATABASE_TITLE if database_errors.unreachable(exc) else None


def error_answer(exc: Exception) -> tuple[int, dict[str, str]]:
    """The status and error body for ``exc``: a view's, and a failed job's (``failure_answer``)."""
    status_code, detail = _classify(exc)
    body = error_body(status_code, detail)
    body["error"] = service_title(exc) or _database_title(exc) or body["error"]
    return status_code, body


def failure_answer(code: str, message: str | None) -> tuple[int, dict[str, str]]:
    """The status and error body of a failure kept as data (a job's): as ``error_answer`` gave
    for the exception whose ``code`` and message it kept."""
    cls = _SERVICE_CODES.get(code)
    if cls is not None and message is not None:
        return error_answer(_as_raised(cls, message))
    if code == "database_unavailable":
        body = error_body(503, DATABASE_UNAVAILABLE)
        body["error"] = DATABASE_TITLE
        return 503, body
    return 500, error_body(500, GENERIC_500)


def _as_raised(cls: type[ServiceError], message: str) -> ServiceError:
    # Built without its own __init__ (some take more than the message): only class and message matter here.
    error = cls.__new__(cls)
    ServiceError.__init__(error, message)
    return error


def _classify(exc: Exception) -> tuple[int, str]:
    if isinstance(exc, ServiceError):
        return service_status(exc), exc.message
    if isinstance(exc, RefusedBody):
        return 400, str(exc.detail)
    if isinstance(exc, exceptions.ParseError):
        return 400, "The request body is not valid JSON."
    if isinstance(exc, exceptions.ValidationError):
        return 422, validation_sentence(exc.detail)
    if isinstance(exc, exceptions.APIException):
        return exc.status_code, _text(exc.detail)
    if isinstance(exc, Http404):
        return 404, "Not found."
    if isinstance(exc, PermissionDenied):
        return 403, "You do not have permission to perform this action."
    if isinstance(exc, RequestDataTooBig):
        return 413, "The request body is too large."
    if database_errors.unreachable(exc):
        # The database stopped or cannot be reached: the caller may retry, nothing is wrong with
        # the request. Logged without the driver's text in the answer (it names hosts and users).
        logger.warning("Database unavailable: %s", exc)
        return 503, DATABASE_UNAVAILABLE
    # Never echo str(exc): it may carry paths, values or internals.
    logger.error("Unhandled exception", exc_info=exc)
    return 500, GENERIC_500


def reason_code(exc: Exception) -> str:
    """A short stable code for a refusal: the engine's, DRF's or Django's."""
    if isinstance(exc, ServiceError):
        return exc.code
    if isinstance(exc, exceptions.APIException):
        return str(exc.default_code)
    if isinstance(exc, Http404):
        return "not_found"
    if isinstance(exc, PermissionDenied):
        return "permission_denied"
    if isinstance(exc, RequestDataTooBig):
        return "body_too_large"
    if database_errors.unreachable(exc):
        return "database_unavailable"
    return "error"


def validation_sentence(detail: Any, prefix: str = "") -> str:
    """Flatten DRF's nested validation detail into one readable sentence naming the fields."""
    parts: list[str] = []
    if isinstance(detail, Mapping):
        for key, value in detail.items():
            name = "" if key == "non_field_errors" else f"{prefix}{key}"
            parts.append(validation_sentence(value, f"{name}." if name else ""))
    elif isinstance(detail, list):
        if all(not isinstance(item, (list, Mapping)) for item in detail):
            label = prefix.rstrip(".")
            text = " ".join(str(item) for item in detail)
            parts.append(f"{label}: {text}" if label else text)
        else:
            for index, item in enumerate(detail):
                parts.append(validation_sentence(item, f"{prefix}{index}."))
    else:
        label = prefix.rstrip(".")
        parts.append(f"{label}: {detail}" if label else str(detail))
    return " ".join(part for part in parts if part)


def _text(detail: Any) -> str:
    if isinstance(detail, (list, Mapping)):
        return validation_sentence(detail)
    return str(detail)


def json_error(status_code: int, detail: str) -> JsonResponse:
    return JsonResponse(error_body(status_code, detail), status=status_code)


def refused(request: HttpRequest, status_code: int, reason: str, detail: str) -> JsonResponse:
    """A refusal outside DRF views (unknown URLs, middleware): audited if the key is valid."""
    if status_code in AUDITED_REFUSALS:
        principal = header_principal(request)
        if principal is not None:
            record_refusal(principal.audit_name, request.method, request.path, status_code, reason)
    return json_error(status_code, detail)


# Django's own handlers, for errors raised outside DRF views (unknown URLs, middleware).
def handler400(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return refused(request, 400, "bad_request", "Bad request.")


def handler403(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return refused(request, 403, "permission_denied", "You do not have permission to perform this action.")


def handler404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    # The admin is a site for people: its wrong URLs get its own HTML page, the API JSON.
    if request.path.startswith(reverse("admin:index")):
        context = {**admin.site.each_context(request), "title": "Page not found"}
        return render(request, "admin/404.html", context, status=404)
    return refused(request, 404, "no_endpoint", f"No endpoint at {request.path}.")


def handler500(request: HttpRequest) -> JsonResponse:
    # Django calls this while handling the exception (a middleware's, e.g. insecure mode's check
    # for key rows), so it is still the current one: a database that cannot be reached is a 503.
    current = sys.exc_info()[1]
    if database_errors.unreachable(current):
        return JsonResponse({**error_body(503, DATABASE_UNAVAILABLE), "error": DATABASE_TITLE}, status=503)
    return json_error(500, GENERIC_500)
