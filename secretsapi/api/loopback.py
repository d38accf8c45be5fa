"""Insecure mode (no key configured) serves one developer's machine, and nothing else.

Any web page the developer opens can make their browser send requests to 127.0.0.1. So, while
no key is configured, a request is answered only when it comes from this machine (the peer
address), names this machine (the ``Host``: a DNS-rebinding page names its own domain), and,
if it may change anything, was not sent by a page of another origin (an empty-body
``POST /sync`` needs no CORS preflight, so CORS alone cannot stop it). ``serve`` refuses to
listen on anything but loopback in that mode (see ``serve``).

Insecure mode is decided per request, once (a key may be created while the server runs), and
only when a request is not plainly local: a local request costs no database read.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from apikeys.keys import insecure_mode
from secretsapi.api.errors import refused

_LOOPBACK_NAME = r"(?:localhost|127\.0\.0\.1|\[::1\])(?::[0-9]{1,5})?"
_HOST = re.compile(_LOOPBACK_NAME, re.IGNORECASE)
_ORIGIN = re.compile(rf"https?://{_LOOPBACK_NAME}", re.IGNORECASE)
# Every method that may change something: all but GET, HEAD, OPTIONS and TRACE.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})

HOW_TO_LEAVE = "set SERVICE_API_KEY or create a key with `manage.py apikey create`"


def is_loopback_host(host: str) -> bool:
    """A ``Host`` header naming this machine: localhost, 127.0.0.1 or [::1], with any port."""
    return _HOST.fullmatch(host) is not None


def is_loopback_origin(origin: str) -> bool:
    """An ``Origin`` of a page served by this machine (http or https, any port); never ``null``."""
    return _ORIGIN.fullmatch(origin) is not None


@functools.lru_cache(maxsize=256)
def is_loopback_address(address: str) -> bool:
    """An address only this machine reaches: ``localhost`` or an IP in 127.0.0.0/8 or ::1.

    Asked for every request's peer: remembered per address (parsing one is ~10 µs).
    """
    if address.lower() == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(address.removeprefix("[").removesuffix("]"))
    except ValueError:
        return False  # another name: it may resolve to any interface
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def insecure(request: HttpRequest) -> bool:
    """Whether no key is configured, asked once per request (the CORS middleware asks too)."""
    known = vars(request).get("_insecure_mode")
    if known is None:
        known = insecure_mode()
        request._insecure_mode = known  # type: ignore[attr-defined]
    return bool(known)


class LoopbackOnlyMiddleware:
    """In insecure mode: 403 for a foreign peer, 400 for a foreign ``Host``, 403 for a write from a foreign page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Behind the proxy every peer is the proxy: the client is the address it forwards.
        peer = "HTTP_X_FORWARDED_FOR" if settings.SERVICE_BEHIND_PROXY else "REMOTE_ADDR"
        peer_local = is_loopback_address(request.META.get(peer) or "")
        # Without a Host header (never a browser's request), the name of the address it reached.
        host_local = is_loopback_host(request.META.get("HTTP_HOST") or request.META.get("SERVER_NAME") or "")
        origin = request.headers.get("Origin")
        foreign_write = origin is not None and request.method not in SAFE_METHODS and not is_loopback_origin(origin)
        if (peer_local and host_local and not foreign_write) or not insecure(request):
            return self.get_response(request)
        if not peer_local:
            return refused(request, 403, "peer_not_loopback",
                           f"Insecure mode (no API key) answers only clients on this machine; {HOW_TO_LEAVE}.")
        if not host_local:
            return refused(request, 400, "host_not_loopback",
                           "Insecure mode (no API key) answers only the Host names localhost, 127.0.0.1 and [::1]; "
                           f"{HOW_TO_LEAVE} to serve other names.")
        return refused(request, 403, "origin_not_loopback",
                       "Insecure mode (no API key) refuses changes requested by pages of other origins; "
                       f"{HOW_TO_LEAVE} to allow them.")
