"""The admin (``/admin/``) only from the networks SERVICE_ADMIN_NETWORKS lists.

The API stays open to every address (a key protects it); the admin, a password login for
people, can be kept to an office or VPN network. Behind the proxy the client is the address the
proxy forwards (it sets X-Forwarded-For, never appends a client's); served directly, the peer.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from secretsapi.api.errors import json_error

ADMIN_PREFIX = "/admin/"


def client_address(request: HttpRequest) -> str:
    header = "HTTP_X_FORWARDED_FOR" if settings.SERVICE_BEHIND_PROXY else "REMOTE_ADDR"
    return str(request.META.get(header) or "").strip()


def allowed(address: str) -> bool:
    """Whether ``address`` lies in one of SERVICE_ADMIN_NETWORKS (an address that is not one: no)."""
    try:
        ip = ipaddress.ip_address(address.removeprefix("[").removesuffix("]"))
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in settings.SERVICE_ADMIN_NETWORKS)


class AdminNetworksMiddleware:
    """403 with the error body for an admin request from outside SERVICE_ADMIN_NETWORKS (when set)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (settings.SERVICE_ADMIN_NETWORKS and (request.path + "/").startswith(ADMIN_PREFIX)
                and not allowed(client_address(request))):
            return json_error(403, "The admin is not available from this address (SERVICE_ADMIN_NETWORKS).")
        return self.get_response(request)
