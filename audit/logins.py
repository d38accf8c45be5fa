"""Admin logins as audit rows (``admin_login``), from Django's login signals.

Signals rather than a custom login view: Django sends them from ``authenticate`` and ``login``
themselves, so every way in (the admin's form, a password reset that logs in, a later login
view) is recorded without replacing Django's own view. They are connected in the audit app's
``ready()``, the one place the house allows signals.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from audit.recorder import record

ACTION = "admin_login"


def logged_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    record(action=ACTION, resource="admin", user=str(user.get_username()), success=True,
           details=_where(request))


def login_failed(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None,
                 **kwargs: Any) -> None:
    # Django has already masked the password in ``credentials``; only the username is kept.
    username = credentials.get("username")
    record(action=ACTION, resource="admin", user=username if isinstance(username, str) else None,
           success=False, details={**_where(request), "reason": "invalid_credentials"})


def _where(request: HttpRequest | None) -> dict[str, str]:
    return {"path": request.path} if request is not None else {}
