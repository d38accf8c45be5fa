"""Which database errors mean "the database cannot be reached" (503, retry later)."""

from __future__ import annotations

from django.db import InterfaceError, OperationalError

# SQLite reports a missing table or column as an OperationalError too; that is a broken
# installation (500), not an outage, and "try again later" would mislead the caller.
_SCHEMA_ERRORS = ("no such table", "no such column")


def unreachable(exc: BaseException | None) -> bool:
    """True for a stopped, unreachable or busy database; False for schema errors and the rest."""
    if not isinstance(exc, OperationalError | InterfaceError):
        return False
    return not str(exc).startswith(_SCHEMA_ERRORS)
