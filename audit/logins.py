"""Admin logins as audit rows (``admin_login``), from Django's login signals.

A failure that reaches django-axes' limit also writes an ``admin_lockout`` row (``limit_reached``).
A login refused unchecked because axes has locked its username or client out is no
``admin_login`` row but one more on the ``admin_lockout`` tally of its client and minute
(``audit.failures``): a locked-out guesser costs one row a minute, and each attempt is counted.

Signals rather than a custom login view: Django sends them from ``authenticate`` and ``login``
themselves, so every way in (the admin's form, a password reset that logs in, a later login
view) is recorded without replacing Django's own view. They are connected in the audit app's
``ready()``, the one place the house allows signals.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from audit.actors import admin_actor
from audit.failures import admin_locked_out, client_of
from audit.recorder import record

ACTION = "admin_login"
LOCKOUT = "admin_lockout"


def logged_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    record(action=ACTION, resource="admin", user=admin_actor(str(user.get_username())), success=True,
           details=_where(request))


def login_failed(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None,
                 **kwargs: Any) -> None:
    # Django has already masked the password in ``credentials``; only the username is kept.
    # As ``admin:<name>``: a login tried as ``service`` must not read as the service key's row.
    username = credentials.get("username")
    username = admin_actor(username) if isinstance(username, str) else None
    if request is not None and refused_by_lockout(request):
        admin_locked_out(request, username)
        return
    record(action=ACTION, resource="admin", user=username,
           success=False, details={**_where(request), "reason": "invalid_credentials"})


def refused_by_lockout(request: HttpRequest) -> bool:
    """Axes' backend refused this attempt before any password was checked.

    The backend marks a request it refuses ``axes_locked_out``. Axes' own receiver of this signal
    marks the attempt that reaches the limit the same way, but also sets its failure count,
    which a refused attempt never gets: so the answer does not depend on which receiver runs first.
    """
    return bool(getattr(request, "axes_locked_out", False)) and getattr(
        request, "axes_failures_since_start", None) is None


def locked_out(sender: Any, request: HttpRequest | None, username: str | None, **kwargs: Any) -> None:
    """A failure reached the limit: the username and client are locked out from now on (a row).

    Axes sends this signal for each refused attempt too; those are tallied by ``login_failed``.
    Only the attempt that reached the limit carries its failure count.
    """
    failures = getattr(request, "axes_failures_since_start", None)
    if request is None or failures is None:
        return
    record(action=LOCKOUT, resource="admin", user=admin_actor(username) if isinstance(username, str) else None,
           success=False, details={**_where(request), "reason": "limit_reached", "failures": failures,
                                   "client": client_of(request)})


def _where(request: HttpRequest | None) -> dict[str, str]:
    return {"path": request.path} if request is not None else {}
