"""Where a webhook may point: http(s) only, and only to public addresses unless allowed.

Checked when an endpoint is added and again before every attempt, since a name's addresses can
change after it was added (DNS rebinding aimed at the service's own network).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings


class AddressRefused(ValueError):
    """The URL is not one the service will send to; the message says why (never a secret)."""


def check(url: str) -> None:
    """Raise ``AddressRefused`` unless ``url`` is http(s) to a host whose every address is allowed."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise AddressRefused(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise AddressRefused("only http and https URLs are allowed")
    if not parts.hostname:
        raise AddressRefused("the URL names no host")
    if parts.username or parts.password:
        raise AddressRefused("the URL must not carry credentials; the endpoint's secret signs each delivery")
    if settings.SERVICE_WEBHOOK_ALLOW_PRIVATE:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, port or (443 if parts.scheme == "https" else 80),
                                   type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise AddressRefused(f"the host {parts.hostname!r} does not resolve ({exc})") from None
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if not all(a.is_global and not a.is_multicast for a in _and_embedded(address)):
            raise AddressRefused(
                f"the host {parts.hostname!r} resolves to {address}, a loopback, link-local, private or "
                "otherwise non-public address; set SERVICE_WEBHOOK_ALLOW_PRIVATE=true to allow it")


Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# NAT64's well-known prefix: its addresses carry an IPv4 address in their last 32 bits.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _and_embedded(address: Address) -> list[Address]:
    """The address and any IPv4 address an IPv6 one carries (mapped, 6to4, Teredo, NAT64)."""
    found: list[Address] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        found += [a for a in (address.ipv4_mapped, address.sixtofour) if a is not None]
        if address.teredo is not None:
            found += list(address.teredo)
        if address in _NAT64:
            found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found
