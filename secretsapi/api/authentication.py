"""The one authentication class: a SHA-256-hashed ``X-API-Key`` compared in constant time."""

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

from audit.recorder import record

HEADER = "X-API-Key"
WWW_AUTHENTICATE = f'ApiKey header="{HEADER}"'


@dataclass(frozen=True)
class Principal:
    """Who made a request, as the audit log names them (None in insecure mode)."""

    audit_name: str | None

    is_authenticated = True


API_KEY_PRINCIPAL = Principal("api-key")
INSECURE_PRINCIPAL = Principal(None)


def actor(request: Request) -> str | None:
    """Who made ``request``, for its audit row: what ApiKeyAuthentication put in ``request.user``."""
    return cast(Principal, request.user).audit_name


def header_principal(request: HttpRequest) -> Principal | None:
    """Who the headers of a request no DRF view handled name (an unknown URL, a refused body).

    None when they name nobody (a missing or wrong key); writes no row, unlike ``authenticate``.
    """
    expected = settings.SERVICE_API_KEY
    if not expected:
        return INSECURE_PRINCIPAL
    presented = request.headers.get(HEADER)
    if presented is not None and hmac.compare_digest(_digest(presented), _digest(expected)):
        return API_KEY_PRINCIPAL
    return None


def request_principal(request: Request) -> Principal | None:
    """Who authenticated ``request``, without authenticating it (None if that has not succeeded)."""
    user = vars(request).get("_user")
    return user if isinstance(user, Principal) else None


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


class ApiKeyAuthentication(BaseAuthentication):
    """Reads only the ``X-API-Key`` header; never the query string or a cookie."""

    def authenticate(self, request: Request) -> tuple[Principal, None]:
        expected = settings.SERVICE_API_KEY
        if not expected:
            # Insecure mode: no key configured, every request is accepted (serve warns loudly).
            return INSECURE_PRINCIPAL, None
        presented = request.headers.get(HEADER)
        if presented is None:
            self._reject(request, "missing", "Missing API key: send it in the X-API-Key header.")
        # Hash both sides so the comparison time depends on neither key's length or content.
        if not hmac.compare_digest(_digest(presented), _digest(expected)):
            self._reject(request, "invalid", "Invalid API key.")
        return API_KEY_PRINCIPAL, None

    def authenticate_header(self, request: Request) -> str:
        return WWW_AUTHENTICATE

    @staticmethod
    def _reject(request: Request, reason: str, detail: str) -> NoReturn:
        record(
            action="authenticate",
            resource="auth",
            user=None,
            success=False,
            details={"reason": reason, "method": request.method, "path": request.path},
        )
        raise exceptions.AuthenticationFailed(detail)
