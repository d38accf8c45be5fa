"""django-cors-headers with the service's two rules on top.

- Insecure mode (no key configured) admits only pages served by this machine (loopback
  origins), never ``null``: otherwise any web page the developer opens could read the API.
- An admitted preflight is granted every header it asks for (the spec allows every header);
  a browser reads ``*`` literally on credentialed requests, so the request's list is echoed.

With a key, every origin is admitted unless SERVICE_CORS_ORIGINS lists some (project/settings.py).
"""

from __future__ import annotations

import re

from corsheaders.middleware import ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_ORIGIN, CorsMiddleware
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.cache import patch_vary_headers

from secretsapi.api.loopback import insecure, is_loopback_origin

# Header names (RFC 9110 tokens) separated by commas: anything else is not echoed into a response.
_NAME = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_HEADER_LIST = re.compile(rf"\s*{_NAME}(?:\s*,\s*{_NAME})*\s*")
_MAX_REQUESTED = 4096


class ServiceCorsMiddleware(CorsMiddleware):
    def add_response_headers(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        origin = request.headers.get("Origin")
        if origin and not is_loopback_origin(origin) and insecure(request):
            # Answered as for an origin off the list: no Access-Control-* header, so the page reads nothing.
            patch_vary_headers(response, ("origin",))
            return response
        super().add_response_headers(request, response)
        requested = request.headers.get("Access-Control-Request-Headers", "")
        if (
            request.method == "OPTIONS" and ACCESS_CONTROL_ALLOW_ORIGIN in response
            and len(requested) <= _MAX_REQUESTED and _HEADER_LIST.fullmatch(requested)
        ):
            response[ACCESS_CONTROL_ALLOW_HEADERS] = requested.strip()
            patch_vary_headers(response, ("access-control-request-headers",))
        return response
