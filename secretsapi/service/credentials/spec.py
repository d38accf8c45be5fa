"""What a source-credential secret declares (``postgres_user``, ``mysql_user``, ``aws_iam_key``):
the operator's connection by name, the user or users that take turns, and the grace period.

The definition is untrusted: it names a connection the operator configured
(SERVICE_ROTATION_CONNECTIONS), never an address or a credential.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from secretsapi.service.definition.periods import PeriodError, parse_duration

CONNECTIONS_SETTING = "SERVICE_ROTATION_CONNECTIONS"
# Generator kind -> the URL schemes of the connections it may use.
KINDS: Mapping[str, tuple[str, ...]] = {
    "postgres_user": ("postgres", "postgresql"),
    "mysql_user": ("mysql", "mariadb"),
    "aws_iam_key": ("aws",),
}
DEFAULT_GRACE = "1h"
# A role or account name: letters, digits, ``_``, ``-``, ``.`` and ``@`` (IAM user names), quoted anyway.
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.@+=,-]{0,62}")
_CONNECTION = re.compile(r"[A-Za-z0-9_.-]{1,64}")
OPTIONS = ("connection", "user", "users", "grace_period", "length")


def _opt(type_: str, default: Any, description: str) -> dict[str, Any]:
    return {"type": type_, "default": default, "description": description}


_COMMON = {
    "connection": _opt("string", None, f"Name of an admin connection the operator configured in "
                                       f"{CONNECTIONS_SETTING}."),
    "grace_period": _opt("string", DEFAULT_GRACE, "How long the previous credential stays valid after a rotation "
                                                  "(s, min, h, d, w, mo, y; 0: retired by the next run)."),
}
_DB = {
    **_COMMON,
    "users": _opt("array", None, "Two users that take turns (dual-phase: no downtime)."),
    "user": _opt("string", None, "One user whose password changes in place (single-phase: briefly disruptive)."),
    "length": _opt("integer", 40, "Password length (letters and digits, 16 to 128)."),
}
# The discovery endpoints' entries (``catalogue``), beside the generators'.
CATALOGUE: dict[str, dict[str, Any]] = {
    "postgres_user": {"description": "A PostgreSQL role's password, changed at the server (ALTER ROLE); the value "
                                     "is {\"password\", \"username\"} as JSON.", "options": _DB},
    "mysql_user": {"description": "A MySQL/MariaDB account's password, changed at the server (ALTER USER); the "
                                  "value is {\"password\", \"username\"} as JSON.", "options": _DB},
    "aws_iam_key": {"description": "An IAM user's access key, its two keys taking turns; the value is "
                                   "{\"access_key_id\", \"secret_access_key\"} as JSON.",
                    "options": {**_COMMON, "user": _opt("string", None, "The IAM user whose keys rotate.")}},
}


@dataclass(frozen=True)
class CredentialSpec:
    kind: str
    connection: str
    users: tuple[str, ...]  # one: single-phase; two: dual-phase (they take turns)
    grace: timedelta
    length: int = 40

    @property
    def dual(self) -> bool:
        """Two credentials take turns: two users, or an IAM user's two access keys."""
        return len(self.users) == 2 or self.kind == "aws_iam_key"


def is_credential(kind: str) -> bool:
    return kind in KINDS


def credential_spec(kind: str, config: Mapping[str, Any], where: str, errors: list[str]) -> CredentialSpec | None:
    """The parsed config, or None with each problem in ``errors`` (naming the place)."""
    connection = config.get("connection")
    if not isinstance(connection, str) or not _CONNECTION.fullmatch(connection):
        errors.append(f"{where}.config.connection: the name of a connection the operator configured in "
                      f"{CONNECTIONS_SETTING} is needed (never an address or a credential)")
    users = _users(kind, config, where, errors)
    grace_text = config.get("grace_period", DEFAULT_GRACE)
    grace = timedelta(0)
    try:
        grace = parse_duration(str(grace_text), allow_zero=True)
    except PeriodError as exc:
        errors.append(f"{where}.config.grace_period: {exc}")
    length = config.get("length", 40)
    if isinstance(length, bool) or not isinstance(length, int) or not 16 <= length <= 128:
        errors.append(f"{where}.config.length: must be an integer from 16 to 128")
    for key in config:
        if key not in OPTIONS:
            errors.append(f"{where}.config: unknown option '{key}' for {kind}")
    if errors or not isinstance(connection, str) or users is None or not isinstance(length, int):
        return None
    return CredentialSpec(kind, connection, users, grace, length)


def _users(kind: str, config: Mapping[str, Any], where: str, errors: list[str]) -> tuple[str, ...] | None:
    one, two = config.get("user"), config.get("users")
    if (one is None) == (two is None):
        errors.append(f"{where}.config: give 'users: [a, b]' (two users that take turns) or 'user: a' "
                      "(one user, briefly disruptive), not both or neither")
        return None
    names = [one] if two is None else two
    if not isinstance(names, list) or not all(isinstance(n, str) and _USER.fullmatch(n) for n in names):
        errors.append(f"{where}.config.{'users' if two is not None else 'user'}: user names of letters, digits "
                      "and _ . - @ (at most 63 characters) are needed")
        return None
    if two is not None and (len(names) != 2 or names[0] == names[1]):
        errors.append(f"{where}.config.users: two different users are needed")
        return None
    if kind == "aws_iam_key" and two is not None:
        errors.append(f"{where}.config.users: an IAM user's two access keys take turns: give 'user: <name>'")
        return None
    return tuple(names)


def scheme_of(url: str) -> str:
    """``postgresql`` of ``postgresql+psycopg://...`` (SQLAlchemy's driver suffix is accepted)."""
    return url.partition(":")[0].partition("+")[0].lower()


def without_driver(url: str) -> str:
    scheme, sep, rest = url.partition(":")
    return scheme.partition("+")[0] + sep + rest


def check_connection(spec: CredentialSpec, connections: Mapping[str, str]) -> str | None:
    """Why ``spec``'s connection cannot be used (None: it can): not configured, or of another kind."""
    url = connections.get(spec.connection)
    if url is None:
        return (f"connection '{spec.connection}' is not configured (the operator lists it in "
                f"{CONNECTIONS_SETTING})")
    scheme = scheme_of(url)
    if scheme not in KINDS[spec.kind]:
        return (f"connection '{spec.connection}' in {CONNECTIONS_SETTING} is a '{scheme}' connection; "
                f"{spec.kind} needs one of {', '.join(KINDS[spec.kind])}")
    return None
