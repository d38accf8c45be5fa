"""Names the client of every request as the origin of the audit rows it writes (``audit.origin``)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from audit import origin
from secretsapi.api.admin_networks import client_address


class AuditOriginMiddleware:
    """``client:<address>``: the peer, or behind the proxy (SERVICE_BEHIND_PROXY) the client
    address it forwards, as the admin's network check reads it. First, so every row of the
    request names it, a refused one's too."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with origin.using(origin.client(client_address(request))):
            return self.get_response(request)
