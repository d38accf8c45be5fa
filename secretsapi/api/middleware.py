"""Refuses oversized request bodies with 413 before anything reads them."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from secretsapi.api.errors import json_error


class BodySizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            size = int(length)
        except ValueError:
            return json_error(400, "The Content-Length header is not a number.")
        limit = settings.SERVICE_MAX_BODY_BYTES
        if size > limit:
            return json_error(413, f"The request body is larger than {limit} bytes.")
        return self.get_response(request)
