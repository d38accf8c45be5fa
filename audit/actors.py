"""Who an audit row names, and the names nobody may take.

The service's own actors are ``service`` (the SERVICE_API_KEY key), ``scheduler`` (scheduled
work), ``cli:<os user>`` (the management commands) and ``admin:<username>`` (the admin site).
An API key or admin user with one of these names would write rows that read exactly like
theirs, so the names are reserved, in any case: ``Service`` and ``CLI:root`` too.
"""

from __future__ import annotations

RESERVED_NAMES = ("service", "scheduler")
RESERVED_PREFIXES = ("cli:", "admin:")
ADMIN_PREFIX = "admin:"
RESERVED_RULE = "the names service and scheduler, and names starting with cli: or admin:, are reserved (in any case)"


def is_reserved(name: str) -> bool:
    folded = name.casefold()
    return folded in RESERVED_NAMES or folded.startswith(RESERVED_PREFIXES)


def admin_actor(username: str) -> str:
    """The audit user of an admin site user: never confused with a key's or the command line's."""
    return f"{ADMIN_PREFIX}{username}"
