"""The one HTTP transport of the remote kinds that speak HTTP through requests: the REST kinds
(GitHub, GitLab, Vercel, Jenkins, Infisical), Vault (hvac's session) and Key Vault (azure-core's
requests transport); Kubernetes' urllib3 client takes the same retry policy.

- One retry and throttle policy (``retry_policy``, urllib3's Retry): 429 and 503 answers, and a
  403 naming a Retry-After (GitHub's secondary rate limit), are retried ``THROTTLE_RETRIES``
  times after the pause the store names (``Retry-After``; else, for 429 or no calls left, its
  rate-limit reset time), capped at ``RETRY_AFTER_MAX`` seconds, else after a backoff with
  jitter; a refused connection once; never a timed-out read, which the store may have applied.
- One timeout rule: every request waits at most the provider's ``timeout`` to connect and for
  each answer (``request``; the SDKs get it the same way).
- No redirect is ever followed: a 3xx answer raises ``Redirected`` (a response hook, so an SDK's
  own calls cannot follow it either) and fails the target; a write that got one was not written.
- No ambient proxy, netrc or CA bundle from the environment (``trust_env`` off): a ~/.netrc entry
  would replace the token header, a proxy would see every request.

Errors name the HTTP status class, never the response body (which can quote the request) or a
credential.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.providers import Provider, tls_setting
from secretsapi.service.targets.remote import ClientCache, load_sdk, status_failure, unreachable

THROTTLE_RETRIES = 3
RETRY_AFTER_MAX = 10  # seconds: the longest pause a store may ask for before a retry
THROTTLE_STATUSES = (429, 503)

# requests.Session is not documented as safe to share between threads: one per thread.
_sessions = ClientCache(64, per_thread=True)


class Redirected(Exception):
    """A store answered with a redirect; nothing is followed. Carries the status only."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def retry_policy() -> Any:
    """urllib3 retries for every HTTP store (see the module's docstring). Once retries run out the
    last answer goes back to the caller, which reports its status as usual."""
    return _retry_class()(total=THROTTLE_RETRIES + 1, connect=1, read=0, status=THROTTLE_RETRIES, redirect=0,
                          other=0, status_forcelist=THROTTLE_STATUSES, allowed_methods=None, backoff_factor=0.25,
                          backoff_jitter=0.25, backoff_max=5, respect_retry_after_header=True,
                          retry_after_max=RETRY_AFTER_MAX, raise_on_status=False, raise_on_redirect=False)


@functools.cache
def _retry_class() -> Any:
    from urllib3.exceptions import InvalidHeader
    from urllib3.util.retry import Retry

    class ThrottleRetry(Retry):
        def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
            # GitHub's secondary rate limit is a 403 that names its pause; other 403s are answers.
            return bool(super().is_retry(method, status_code, has_retry_after)
                        or (status_code == 403 and has_retry_after and self.total))

        def get_retry_after(self, response: Any) -> float | None:
            # Stores that name the end of the rate-limit window instead (Vercel, GitHub, GitLab):
            # its reset time in epoch seconds, when throttled or out of calls; capped like Retry-After.
            try:
                after = super().get_retry_after(response)
            except InvalidHeader:  # a Retry-After no one can read: the reset time, else the backoff
                after = None
            if after is not None:
                return min(float(after), float(self.retry_after_max))
            headers = response.headers
            remaining = headers.get("X-RateLimit-Remaining", headers.get("RateLimit-Remaining"))
            reset = headers.get("X-RateLimit-Reset") or headers.get("RateLimit-Reset")
            if reset is None or not reset.isdigit() or (response.status != 429 and remaining != "0"):
                return None
            return min(max(0.0, int(reset) - time.time()), float(self.retry_after_max))

        def get_backoff_time(self) -> float:
            # urllib3 retries the first time at once; a throttled store needs a pause every time.
            pause = float(super().get_backoff_time())
            if pause == 0 and self.history:
                pause = self.backoff_factor + random.random() * self.backoff_jitter  # noqa: S311 - jitter
            return pause

    return ThrottleRetry


def new_session(type_: str, *, headers: Mapping[str, str] | None = None, auth: tuple[str, str] | None = None,
                verify: bool | str = True) -> Any:
    """A session of this transport, for one owner (an SDK client's, or ``session``'s cache)."""
    requests = load_sdk("requests", "requests", type_)
    made = requests.Session()
    made.trust_env = False
    made.headers.update(headers or {})
    made.auth = auth
    made.verify = verify
    made.max_redirects = 0
    made.hooks["response"].append(_refuse_redirect)
    adapter = requests.adapters.HTTPAdapter(max_retries=retry_policy())
    made.mount("http://", adapter)
    made.mount("https://", adapter)
    return made


def _refuse_redirect(response: Any, *args: Any, **kwargs: Any) -> Any:
    if 300 <= int(response.status_code) < 400:
        response.close()
        raise Redirected(int(response.status_code))
    return response


def session(settings: tuple[Any, ...], headers: Mapping[str, str], type_: str, verify: bool | str,
            auth: tuple[str, str] | None = None) -> Any:
    """This thread's session for ``settings`` (everything it depends on, credentials included:
    the cache keeps only their digest), sending ``headers`` on every request."""
    return _sessions.get((type_, *settings, verify),
                         lambda: new_session(type_, headers=headers, auth=auth, verify=verify))


def request(http: Any, method: str, url: str, *, where: str, operation: str, timeout: float, **kwargs: Any) -> Any:
    """One request through ``http`` (a ``session``): throttling retried, redirects refused."""
    try:
        return http.request(method, url, timeout=timeout, allow_redirects=False, **kwargs)
    except Redirected as exc:
        raise redirected(where, operation, exc.status) from None
    except Exception as exc:  # requests' own, or what it wraps: named by class, never by text
        raise unreachable(where, exc) or TargetError(f"{where}: {operation} failed ({type(exc).__name__})") from None


def redirected(where: str, operation: str, status: int) -> TargetError:
    return TargetError(f"{where}: {operation} failed ({status}: the store answered with a redirect, which is "
                       "never followed; check the address)")


def tls_verify(provider: Provider, ctx: TargetContext) -> bool | str:
    """The provider's ``verify``: true (the default), false, or a CA bundle path (relative to the
    definition folder), for self-managed instances behind a private CA."""
    return tls_setting(provider.settings.get("verify", True), ctx, provider.alias)


def status_error(response: Any, where: str, operation: str, missing: str = "no such resource") -> TargetError:
    """The answer's status class as a TargetError; ``missing`` says what a 404 means here."""
    status = int(response.status_code)
    if status in (400, 422):
        return TargetError(f"{where}: {operation} rejected ({status}: the store refused the request)")
    if status in THROTTLE_STATUSES or (status == 403 and "Retry-After" in response.headers):
        return TargetError(f"{where}: {operation} throttled ({status}), still after {THROTTLE_RETRIES} retries")
    if 300 <= status < 400:
        return redirected(where, operation, status)
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
