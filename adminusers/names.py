"""The username check every way of making or renaming an admin user shares (see audit.actors)."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from audit.actors import RESERVED_RULE, is_reserved


def check_username(username: str) -> None:
    """ValidationError naming the rule when ``username`` is reserved."""
    if is_reserved(username):
        raise ValidationError(f"The username {username!r} is not allowed: {RESERVED_RULE}.", code="reserved")
