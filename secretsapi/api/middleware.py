"""Refuses oversized (413) and length-less (411) request bodies before anything reads them."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from secretsapi.api.errors import json_error, refused

# The methods whose requests carry a body.
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class BodySizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.META.get("CONTENT_LENGTH") and request.META.get("HTTP_TRANSFER_ENCODING"):
            # Django reads bodies by Content-Length only: a chunked body would arrive empty and
            # `{"dry_run": true}` would silently run a real sync. Refuse it instead.
            return json_error(
                411, "Send the request body with a Content-Length header; chunked bodies are not accepted."
            )
        if (not request.META.get("CONTENT_LENGTH") and request.method in BODY_METHODS
                and request.META.get("SERVER_PROTOCOL") == "HTTP/1.0"):
            # An HTTP/1.0 body without a length runs to the end of the connection, which the server
            # never reads (gunicorn takes it as empty): `{"dry_run": true}` became a real sync. In
            # HTTP/1.1 a request with neither header has no body, and is served as before.
            return json_error(411, "Send the request body with a Content-Length header (HTTP/1.0 request).")
        length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            size = int(length)
        except ValueError:
            return refused(request, 400, "bad_content_length", "The Content-Length header is not a number.")
        limit = settings.SERVICE_MAX_BODY_BYTES
        if size > limit:
            return refused(request, 413, "body_too_large", f"The request body is larger than {limit} bytes.")
        return self.get_response(request)
