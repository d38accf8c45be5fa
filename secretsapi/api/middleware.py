"""Refuses oversized (413) and length-less chunked (411) request bodies before anything reads them."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from secretsapi.api.errors import json_error, refused


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
        length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            size = int(length)
        except ValueError:
            return refused(request, 400, "bad_content_length", "The Content-Length header is not a number.")
        limit = settings.SERVICE_MAX_BODY_BYTES
        if size > limit:
            return refused(request, 413, "body_too_large", f"The request body is larger than {limit} bytes.")
        return self.get_response(request)
