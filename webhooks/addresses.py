"""Where a webhook may point: http(s) only, and only to public addresses unless allowed.

Checked when an endpoint is added and again before every attempt, since a name's addresses can
change after it was added (DNS rebinding aimed at the service's own network). ``resolve`` names
the one address an attempt then connects to (``delivery``): the name is looked up once per
attempt, so the address checked is the address used.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings


class AddressRefused(ValueError):
    """The URL is not one the service will send to; the message says why (never a secret)."""


@dataclass(frozen=True)
class Destination:
    """Where one attempt goes: ``address`` (checked) is connected to; ``host`` is the name the
    TLS handshake (SNI) and the certificate are checked against; ``host_header`` and ``target``
    (path and query) make the request line as the URL says."""

    scheme: str
    host: str
    port: int
    address: str
    host_header: str
    target: str


REDACTED = "***"


def shown(url: str) -> str:
    """``url`` as the admin, ``webhook list`` and audit rows show it: each query value (a token,
    often) replaced by ``***``, the names kept; no user or password, no fragment. Anything that
    does not parse is cut at its first ``?`` or ``#``."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
        # A piece without "=" (``?<token>``) is all value.
        query = "&".join(f"{piece.partition('=')[0]}={REDACTED}" if "=" in piece else REDACTED
                         for piece in parts.query.split("&")) if parts.query else ""
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        return url.split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]


def check(url: str) -> None:
    """Raise ``AddressRefused`` unless ``url`` is http(s) to a host whose every address is allowed."""
    resolve(url)


def resolve(url: str) -> Destination:
    """``url``'s destination, or ``AddressRefused``: every address the name resolves to must be
    public (unless SERVICE_WEBHOOK_ALLOW_PRIVATE), and the first one is the one to connect to."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise AddressRefused(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise AddressRefused("only http and https URLs are allowed")
    if not parts.hostname:
        raise AddressRefused("the URL names no host")
    if parts.username or parts.password or "@" in parts.netloc:
        raise AddressRefused("the URL must not carry credentials; the endpoint's secret signs each delivery")
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise AddressRefused(f"the host {parts.hostname!r} does not resolve ({exc})") from None
    found = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    if not found:
        raise AddressRefused(f"the host {parts.hostname!r} does not resolve")
    if not settings.SERVICE_WEBHOOK_ALLOW_PRIVATE:
        for address in found:
            if not public(address):
                raise AddressRefused(
                    f"the host {parts.hostname!r} resolves to {address}, a loopback, link-local, private or "
                    "otherwise non-public address; set SERVICE_WEBHOOK_ALLOW_PRIVATE=true to allow it")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Destination(parts.scheme, parts.hostname, port, str(found[0]), parts.netloc, target)


Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# Prefixes whose addresses carry an IPv4 address in their last 32 bits: NAT64's well-known one,
# the deprecated IPv4-compatible addresses (``::a.b.c.d``, so ``[::7f00:1]`` is 127.0.0.1) and
# SIIT's IPv4-translated ones (``::ffff:0:a.b.c.d``).
_CARRY_IPV4 = tuple(ipaddress.ip_network(n) for n in ("64:ff9b::/96", "::/96", "::ffff:0:0:0/96"))
# NAT64 for local use (RFC 8215): whatever it translates to is on the operator's own network.
_NOT_GLOBAL = (ipaddress.ip_network("64:ff9b:1::/48"),)


def public(address: Address) -> bool:
    """Globally routable, not multicast, and so is every IPv4 address it carries."""
    if any(address in network for network in _NOT_GLOBAL):
        return False
    return all(a.is_global and not a.is_multicast for a in _and_embedded(address))


def _and_embedded(address: Address) -> list[Address]:
    """The address and any IPv4 address an IPv6 one carries (mapped, compatible, translated,
    6to4, Teredo's server and client, NAT64)."""
    found: list[Address] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        found += [a for a in (address.ipv4_mapped, address.sixtofour) if a is not None]
        if address.teredo is not None:
            found += list(address.teredo)
        if any(address in network for network in _CARRY_IPV4):
            found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found
