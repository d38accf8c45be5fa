"""Failed attempts as tallies: one row per client, reason, minute (and project asked for, among
the existing ones), counting every attempt.

A hostile client can fail as fast as the server answers, with request lines of several
kilobytes: a row per attempt holding the path grew the database by 5.5 KB a request (16.6 MB
for 3,000). A tally costs one row per client and minute whatever the rate, holds the first
attempt's method and path cut to ``PATH_MAX`` characters and never a header, and still counts
each attempt (``details.count``), across threads, workers and instances (``recorder.tally``).
"""

from __future__ import annotations

import ipaddress

from django.http import HttpRequest
from django.utils import timezone

from audit.recorder import fit, tally

PATH_MAX = 256
METHOD_MAX = 16


def client_of(request: HttpRequest) -> str:
    """The address that connected (never a forwarding header, which the client writes itself).

    An IPv6 client is its /64: one host holds a whole /64 and could otherwise make a row per
    address it picks from it.
    """
    address = str(request.META.get("REMOTE_ADDR") or "")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return fit(address, 64) or "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def authentication_failed(request: HttpRequest, reason: str, project: str | None = None) -> None:
    """One more request without a valid key (``reason``: ``missing`` or ``invalid``); ``project``:
    the existing project its path asked for, whose rows then count it (a row per project)."""
    _count(request, action="authenticate", resource="auth", reason=reason, user=None, project=project)


def admin_locked_out(request: HttpRequest, username: str | None) -> None:
    """One more admin login refused, unchecked, because its client or username is locked out."""
    _count(request, action="admin_lockout", resource="admin", reason="locked_out", user=username)


def _count(request: HttpRequest, *, action: str, resource: str, reason: str, user: str | None,
           project: str | None = None) -> None:
    client = client_of(request)
    now = timezone.now()
    minute = now.strftime("%Y-%m-%dT%H:%MZ")
    tally(
        key=f"{action}|{reason}|{client}|{minute}",
        project=project,
        at=now,
        action=action,
        resource=resource,
        user=user,
        details={
            "reason": reason,
            "client": client,
            "minute": minute,
            "method": fit(str(request.method), METHOD_MAX),
            "path": fit(request.path, PATH_MAX),
        },
    )
