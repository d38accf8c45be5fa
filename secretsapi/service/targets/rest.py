"""HTTP plumbing of the REST target kinds (GitHub, GitLab, Jenkins): sessions, throttling, statuses.

Each kind calls its store's documented REST API through ``requests``. A throttled answer is
retried ``THROTTLE_RETRIES`` times after the pause the store names (``Retry-After``, or the
rate-limit reset time), capped at ``RETRY_AFTER_MAX`` seconds, else after a backoff with jitter;
what counts as throttled is each store's rule (``Throttled``). Errors name the HTTP status
class, never the response body (which can quote the request) or a credential.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.remote import (
    RETRY_AFTER_MAX,
    THROTTLE_RETRIES,
    ClientCache,
    Provider,
    load_sdk,
    status_failure,
    tls_setting,
    unreachable,
)

# requests.Session is not documented as safe to share between threads: one per thread.
_sessions = ClientCache(64, per_thread=True)

# Whether an answer is the store's throttling (its own rule: GitHub also throttles with 403).
Throttled = Callable[[Any], bool]


def session(settings: tuple[Any, ...], headers: Mapping[str, str], type_: str, verify: bool | str,
            auth: tuple[str, str] | None = None) -> Any:
    """This thread's session for ``settings`` (everything it depends on, credentials included:
    the cache keeps only their digest), sending ``headers`` on every request."""
    requests = load_sdk("requests", "requests", type_)

    def make() -> Any:
        made = requests.Session()
        made.headers.update(headers)
        made.auth = auth
        made.verify = verify
        # Without the environment: a ~/.netrc entry would replace the token header.
        made.trust_env = False
        return made

    return _sessions.get((type_, *settings, verify), make)


def tls_verify(provider: Provider, ctx: TargetContext) -> bool | str:
    """The provider's ``verify``: true (the default), false, or a CA bundle path (relative to the
    definition folder), for self-managed instances behind a private CA."""
    return tls_setting(provider.settings.get("verify", True), ctx, provider.alias)


def call(http: Any, method: str, url: str, *, where: str, operation: str, timeout: float,
         throttled: Throttled, **kwargs: Any) -> Any:
    """One request, retried while the store throttles it; the last answer once retries run out.

    Redirects are not followed: a store moving an API elsewhere would get the credentials there.
    """
    attempt = 0
    while True:
        try:
            response = http.request(method, url, timeout=timeout, allow_redirects=False, **kwargs)
        except Exception as exc:  # requests' own, or what it wraps: named by class, never by text
            raise unreachable(where, exc) or TargetError(
                f"{where}: {operation} failed ({type(exc).__name__})") from None
        if attempt == THROTTLE_RETRIES or not throttled(response):
            return response
        response.close()
        time.sleep(pause(response.headers, attempt))
        attempt += 1


def pause(headers: Mapping[str, str], attempt: int) -> float:
    """Seconds to wait before retrying a throttled answer, at most RETRY_AFTER_MAX.

    ``Retry-After`` (seconds or an HTTP date) first; else a rate-limit reset time
    (``x-ratelimit-reset``, ``RateLimit-Reset``: epoch seconds) when no calls remain; else
    exponential backoff. Jitter keeps concurrent callers from retrying together.
    """
    jitter = random.random() * 0.25  # noqa: S311 - jitter, not a secret
    named = _retry_after(headers.get("Retry-After"))
    if named is None and str(headers.get("x-ratelimit-remaining", headers.get("RateLimit-Remaining"))) == "0":
        named = _reset(headers.get("x-ratelimit-reset") or headers.get("RateLimit-Reset"))
    if named is None:
        named = 0.25 * 2 ** attempt
    return min(max(named, 0.0), RETRY_AFTER_MAX) + jitter


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


def _reset(value: str | None) -> float | None:
    try:
        return float(value) - time.time() if value else None
    except ValueError:
        return None


def status_error(response: Any, where: str, operation: str, missing: str = "no such resource") -> TargetError:
    """The answer's status class as a TargetError; ``missing`` says what a 404 means here."""
    status = int(response.status_code)
    if status in (400, 422):
        return TargetError(f"{where}: {operation} rejected ({status}: the store refused the request)")
    if status in (429, 503):
        return TargetError(f"{where}: {operation} throttled ({status}), still after {THROTTLE_RETRIES} retries")
    if 300 <= status < 400:
        return TargetError(f"{where}: {operation} failed ({status}: redirected; check the base URL)")
    return status_failure(status, where, operation, missing=f"{missing}, or the token cannot see it",
                          unauthenticated=": the token is missing, invalid or expired")


def timestamp(value: Any) -> datetime | None:
    """An answer's ISO 8601 time (``2024-01-02T03:04:05Z``, fractions too); None when absent or unreadable."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def throttled_429(response: Any) -> bool:
    """The stores whose only throttling answer is 429 (GitLab, Infisical)."""
    return bool(response.status_code == 429)


def json_body(response: Any, where: str, operation: str) -> Any:
    """The answer's JSON body; a TargetError (no body text) when it is not JSON."""
    try:
        return response.json()
    except ValueError:
        raise TargetError(f"{where}: {operation} failed (the answer is not JSON)") from None


def base_url(value: str, alias: str, setting: str) -> str:
    """An http(s) base URL without its trailing slash."""
    if not value.startswith(("https://", "http://")):
        raise TargetError(f"provider '{alias}': {setting} must be an http(s) URL")
    return value.rstrip("/")
