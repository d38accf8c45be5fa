"""The one authentication class: the key of ``X-API-Key`` or ``Authorization: Bearer`` resolved to a
principal with a name and scopes.

Both headers carry the same keys (a scraper such as Prometheus can send only ``Authorization``).
An ``Authorization`` header of another scheme (a proxy's Basic) is not read; a Bearer one that is
malformed, or that names another key than ``X-API-Key`` beside it, is refused: never guessed.
The environment's SERVICE_API_KEY is the principal ``service`` with every scope; a named key
(``sk_<id>_<secret>``) is its row's name and scopes, read from the database on every request
(never cached, so a revocation holds on every instance from the next request on).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
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
from secretsapi.api.project_asked import project_asked
from secretsapi.log_format import KEY_NAME_ENVIRON

HEADER = "X-API-Key"
AUTHORIZATION = "Authorization"
BEARER = "Bearer"
# Both ways of sending a key, as two challenges (RFC 9110 11.6.1: a list in one field).
WWW_AUTHENTICATE = f'ApiKey header="{HEADER}", {BEARER} realm="secretsapi"'
# RFC 6750 2.1: the scheme (any case), one or more spaces, then the key; printable ASCII, no space.
_BEARER_CREDENTIALS = re.compile(r"[\x21-\x7e]+")


class KeyHeadersRefused(Exception):
    """The request's key headers cannot be read as one key: ``reason`` for the audit tally."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def sends_key(headers: Mapping[str, str]) -> bool:
    """Whether the request carries a key at all (``X-API-Key``, or an Authorization header of the
    Bearer scheme, well-formed or not)."""
    authorization = headers.get(AUTHORIZATION)
    bearer = authorization is not None and authorization.strip(" ").partition(" ")[0].lower() == BEARER.lower()
    return HEADER in headers or bearer


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key the request presents in ``X-API-Key`` or ``Authorization: Bearer``, or None.

    Raises ``KeyHeadersRefused`` for a Bearer header without exactly one key after the scheme,
    or one naming another key than ``X-API-Key`` (compared by their digests).
    """
    api_key = headers.get(HEADER)
    authorization = headers.get(AUTHORIZATION)
    if authorization is None:
        return api_key
    scheme, _, credentials = authorization.strip(" ").partition(" ")
    if scheme.lower() != BEARER.lower():
        return api_key  # another scheme's header (a proxy's Basic) is not ours to read
    credentials = credentials.strip(" ")
    if not _BEARER_CREDENTIALS.fullmatch(credentials):
        raise KeyHeadersRefused("malformed", "Malformed Authorization header: send 'Authorization: Bearer <key>' "
                                "(one key after the scheme, no spaces in it).")
    if api_key is not None and not hmac.compare_digest(_digest(api_key), _digest(credentials)):
        raise KeyHeadersRefused("conflicting", "X-API-Key and Authorization: Bearer name different keys: "
                                "send the key in one of them.")
    return credentials


@dataclass(frozen=True)
class Principal:
    """Who made a request, as the audit log names them (None in insecure mode), and what it may do."""

    audit_name: str | None
    scopes: frozenset[str] = ALL_SCOPES
    # The projects it may touch (project -> environments, empty: every one); None: every project.
    projects: keys.Limits | None = None

    is_authenticated = True


SERVICE_PRINCIPAL = Principal(keys.SERVICE_NAME)
INSECURE_PRINCIPAL = Principal(None)


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
            return Principal(row.name, row.scopes, row.projects)
    return None


def actor(request: Request) -> str | None:
    """Who made ``request``, for its audit row: what ApiKeyAuthentication put in ``request.user``."""
    return cast(Principal, request.user).audit_name


def header_principal(request: HttpRequest) -> Principal | None:
    """Who the headers of a request no DRF view handled name (an unknown URL, a refused body).

    None when they name nobody (a missing, wrong, malformed or conflicting key); writes no row,
    unlike ``authenticate``.
    """
    try:
        presented = presented_key(request.headers)
    except KeyHeadersRefused:
        presented = None
    principal = resolve(presented)
    if principal is None and keys.insecure_mode():
        return INSECURE_PRINCIPAL
    return principal


def request_principal(request: Request) -> Principal | None:
    """Who authenticated ``request``, without authenticating it (None if that has not succeeded)."""
    user = vars(request).get("_user")
    return user if isinstance(user, Principal) else None


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


class ApiKeyAuthentication(BaseAuthentication):
    """Reads only the ``X-API-Key`` and ``Authorization: Bearer`` headers; never the query string
    or a cookie."""

    def authenticate(self, request: Request) -> tuple[Principal, None]:
        try:
            presented = presented_key(request.headers)
        except KeyHeadersRefused as refused:
            if keys.insecure_mode():
                return INSECURE_PRINCIPAL, None
            self._reject(request, refused.reason, refused.detail)
        principal = resolve(presented)
        if principal is not None:
            # The key's name for the access line (secretsapi/log_format.py); the environ is the META.
            request.META[KEY_NAME_ENVIRON] = principal.audit_name
            return principal, None
        if keys.insecure_mode():
            # Insecure mode: no key configured, every request is accepted (serve warns loudly).
            return INSECURE_PRINCIPAL, None
        if presented is None:
            self._reject(request, "missing", "Missing API key: send it in the X-API-Key header or as "
                         "'Authorization: Bearer <key>'.")
        self._reject(request, "invalid", "Invalid API key.")

    def authenticate_header(self, request: Request) -> str:
        return WWW_AUTHENTICATE

    @staticmethod
    def _reject(request: Request, reason: str, detail: str) -> NoReturn:
        # A tally per client and minute, not a row per attempt: failing costs the caller nothing.
        # In the rows of the project the path asked for, when it exists.
        view = (getattr(request, "parser_context", None) or {}).get("view")
        authentication_failed(request._request, reason, project_asked(view))
        raise exceptions.AuthenticationFailed(detail)
