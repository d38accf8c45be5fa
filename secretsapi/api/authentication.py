"""The one authentication class: ``X-API-Key`` resolved to a principal with a name and scopes.

The environment's SERVICE_API_KEY is the principal ``service`` with every scope; a named key
(``sk_<id>_<secret>``) is its row's name and scopes, read from the database on every request
(never cached, so a revocation holds on every instance from the next request on).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import NoReturn, cast

from django.conf import settings
from django.http import HttpRequest
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from apikeys import keys
from apikeys.scopes import ALL_SCOPES
from audit.failures import authentication_failed
from project.log_format import KEY_NAME_ENVIRON

HEADER = "X-API-Key"
WWW_AUTHENTICATE = f'ApiKey header="{HEADER}"'


@dataclass(frozen=True)
class Principal:
    """Who made a request, as the audit log names them (None in insecure mode), and what it may do."""

    audit_name: str | None
    scopes: frozenset[str] = ALL_SCOPES

    is_authenticated = True


SERVICE_PRINCIPAL = Principal(keys.SERVICE_NAME)
INSECURE_PRINCIPAL = Principal(None)


def insecure_mode() -> bool:
    """No key configured at all: neither SERVICE_API_KEY nor any key row."""
    return not settings.SERVICE_API_KEY and not keys.any_configured()


def resolve(presented: str | None) -> Principal | None:
    """The principal ``presented`` names, or None (no key, a wrong, revoked or expired one)."""
    if presented is None:
        return None
    expected = settings.SERVICE_API_KEY
    # Hash both sides so the comparison time depends on neither key's length or content.
    if expected and hmac.compare_digest(_digest(presented), _digest(expected)):
        return SERVICE_PRINCIPAL
    if presented.startswith(keys.PREFIX):
        row = keys.resolve(presented)
        if row is not None:
            return Principal(row.name, row.scopes)
    return None


def actor(request: Request) -> str | None:
    """Who made ``request``, for its audit row: what ApiKeyAuthentication put in ``request.user``."""
    return cast(Principal, request.user).audit_name


def header_principal(request: HttpRequest) -> Principal | None:
    """Who the headers of a request no DRF view handled name (an unknown URL, a refused body).

    None when they name nobody (a missing or wrong key); writes no row, unlike ``authenticate``.
    """
    presented = request.headers.get(HEADER)
    principal = resolve(presented)
    if principal is None and insecure_mode():
        return INSECURE_PRINCIPAL
    return principal


def request_principal(request: Request) -> Principal | None:
    """Who authenticated ``request``, without authenticating it (None if that has not succeeded)."""
    user = vars(request).get("_user")
    return user if isinstance(user, Principal) else None


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


class ApiKeyAuthentication(BaseAuthentication):
    """Reads only the ``X-API-Key`` header; never the query string or a cookie."""

    def authenticate(self, request: Request) -> tuple[Principal, None]:
        presented = request.headers.get(HEADER)
        principal = resolve(presented)
        if principal is not None:
            # The key's name for the access line (project/log_format.py); the environ is the META.
            request.META[KEY_NAME_ENVIRON] = principal.audit_name
            return principal, None
        if insecure_mode():
            # Insecure mode: no key configured, every request is accepted (serve warns loudly).
            return INSECURE_PRINCIPAL, None
        if presented is None:
            self._reject(request, "missing", "Missing API key: send it in the X-API-Key header.")
        self._reject(request, "invalid", "Invalid API key.")

    def authenticate_header(self, request: Request) -> str:
        return WWW_AUTHENTICATE

    @staticmethod
    def _reject(request: Request, reason: str, detail: str) -> NoReturn:
        # A tally per client and minute, not a row per attempt: failing costs the caller nothing.
        authentication_failed(request._request, reason)
        raise exceptions.AuthenticationFailed(detail)
