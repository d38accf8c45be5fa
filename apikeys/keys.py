"""Creating, finding and retiring named keys. A key is ``sk_<id>_<secret>``: the id finds its row,
the secret (32 random bytes, URL-safe base64) is compared by SHA-256 in constant time."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apikeys.models import ApiKey
from apikeys.scopes import ALL_SCOPES
from audit.actors import RESERVED_RULE, is_reserved
from audit.recorder import record
from secretsapi.service.definition import periods

PREFIX = "sk_"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,99}$")
# The name the environment's SERVICE_API_KEY acts under (reserved: see audit.actors).
SERVICE_NAME = "service"
DEFAULT_GRACE = timedelta(hours=24)
_KEY = re.compile(r"^sk_([1-9][0-9]{0,18})_([A-Za-z0-9_-]{43})$")
# The largest id a row can have (a BigAutoField: signed 64 bits on every database). A larger one
# names no row, and SQLite's driver cannot even send it (OverflowError, once a 500).
MAX_ID = 2**63 - 1


class KeyRefused(ValueError):
    """A management request that cannot be done: the message says why."""


@dataclass(frozen=True)
class IssuedKey:
    """A key just made: ``key`` is shown once and stored nowhere."""

    name: str
    key: str


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def parse_duration(text: str, *, allow_zero: bool = False) -> timedelta:
    """A lifetime or grace period in the project's one grammar (``90d``, ``12h``, ``30min``, ``6mo``;
    ``periods.parse_duration``): a refusal names the units, and asks which an ambiguous ``m`` means."""
    try:
        return periods.parse_duration(text, allow_zero=allow_zero)
    except periods.PeriodError as exc:
        raise KeyRefused(f"{exc}.") from None


def _new_secret() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii").rstrip("=")


def create(name: str, scopes: list[str], expires: timedelta | None = None, *, actor: str | None = None,
           projects: Limits | None = None) -> IssuedKey:
    if not NAME.match(name):
        raise KeyRefused(f"Invalid key name {name!r}: letters, digits and . _ : @ - (at most 100).")
    if is_reserved(name):
        raise KeyRefused(f"Invalid key name {name!r}: {RESERVED_RULE}.")
    unknown = sorted(set(scopes) - ALL_SCOPES)
    if unknown or not scopes:
        raise KeyRefused(f"Unknown or missing scope {unknown}; choose from {sorted(ALL_SCOPES)}.")
    if ApiKey.objects.filter(name=name).exists():
        raise KeyRefused(f"A key named {name!r} exists already (revoked keys keep their name).")
    secret = _new_secret()
    now = timezone.now()
    row = ApiKey.objects.create(
        name=name, scopes=sorted(set(scopes)), secret_hash=digest(secret), created=now,
        expires=now + expires if expires else None,
        projects=None if projects is None else {p: list(envs) for p, envs in projects.items()},
    )
    _audit("apikey_create", row, actor, scopes=row.scopes, expires=_stamp(row.expires), projects=row.projects)
    return IssuedKey(name, f"{PREFIX}{row.pk}_{secret}")


def _active(name: str) -> ApiKey:
    row = ApiKey.objects.select_for_update().filter(name=name).first()
    if row is None:
        raise KeyRefused(f"No key named {name!r}.")
    if row.revoked is not None:
        raise KeyRefused(f"The key {name!r} is revoked.")
    return row


def revoke(name: str, *, actor: str | None = None) -> None:
    """Refused from the next request on, on every instance: lookups are never cached."""
    with transaction.atomic():
        row = _active(name)
        row.revoked = timezone.now()
        row.save(update_fields=["revoked"])
    _audit("apikey_revoke", row, actor)


def rotate(name: str, grace: timedelta = DEFAULT_GRACE, *, actor: str | None = None) -> IssuedKey:
    """A new secret for the same name, id and scopes; the old one is accepted for ``grace`` more."""
    with transaction.atomic():
        row = _active(name)
        secret = _new_secret()
        row.previous_hash, row.previous_until = row.secret_hash, timezone.now() + grace
        row.secret_hash = digest(secret)
        row.save(update_fields=["secret_hash", "previous_hash", "previous_until"])
    _audit("apikey_rotate", row, actor, old_key_until=_stamp(row.previous_until))
    return IssuedKey(name, f"{PREFIX}{row.pk}_{secret}")


def _stamp(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def limit_projects(name: str, projects: Limits | None, *, actor: str | None = None) -> None:
    """Set (or, with None, lift) the projects a key may touch, from its next request on."""
    with transaction.atomic():
        row = _active(name)
        row.projects = None if projects is None else {p: list(envs) for p, envs in projects.items()}
        row.save(update_fields=["projects"])
    _audit("apikey_limit", row, actor, projects=row.projects)


def _audit(action: str, row: ApiKey, actor: str | None, **facts: object) -> None:
    """Key management is audited like any operation: the key's name and facts, never the key.
    A key limited to one project is that project's: its rows name it (as its requests' do)."""
    limits = row.projects
    only = next(iter(limits)) if limits is not None and len(limits) == 1 else None
    record(action=action, resource=f"apikey:{row.name}", user=actor, success=True,
           details={"name": row.name, **facts}, context={"project": only} if only else None)


def any_configured() -> bool:
    """Whether any key row exists. Revoked and expired rows count: revoking the last key must
    not turn the server into insecure mode (which accepts every request)."""
    return ApiKey.objects.exists()


def insecure_mode() -> bool:
    """No key configured at all: neither SERVICE_API_KEY nor any key row."""
    return not settings.SERVICE_API_KEY and not any_configured()


@dataclass(frozen=True)
class ResolvedKey:
    """Who a presented key is: its row's name, scopes and projects (``Limits``: None, every one)."""

    name: str
    scopes: frozenset[str]
    projects: Limits | None = None


# Project name -> the environments a limited key may use there (empty: every one).
Limits = dict[str, tuple[str, ...]]
PROJECT_SPEC = re.compile(r"^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?::([A-Za-z0-9._-]{1,255}))?$")


def parse_projects(specs: list[str] | None) -> Limits | None:
    """``PROJECT`` or ``PROJECT:ENVIRONMENT`` items (the command's ``--project``) as limits; None
    or an empty list: no limit. A project named bare allows every environment of it."""
    if not specs:
        return None
    limits: dict[str, set[str] | None] = {}
    for spec in specs:
        match = PROJECT_SPEC.match(spec)
        if match is None:
            raise KeyRefused(f"Invalid project limit {spec!r}: PROJECT or PROJECT:ENVIRONMENT "
                             "(a project name is lower-case letters, digits and '-').")
        project, environment = match.group(1), match.group(2)
        if environment is None:
            limits[project] = None
        elif project not in limits or limits[project] is not None:
            limits.setdefault(project, set()).add(environment)  # type: ignore[union-attr]
    return {name: tuple(sorted(envs or ())) for name, envs in sorted(limits.items())}


def limits_of(stored: object) -> Limits | None:
    """A row's ``projects`` column as limits (None: every project)."""
    if not isinstance(stored, dict):
        return None
    return {str(name): tuple(str(e) for e in (envs or ())) for name, envs in stored.items()}


def allowed_projects(name: str) -> list[str] | None:
    """The projects the key named ``name`` may touch, sorted; None: every project (a key without a
    limit, the environment's SERVICE_API_KEY ``service``, or no key row of that name)."""
    row = ApiKey.objects.filter(name=name).only("projects").first()
    limits = limits_of(row.projects) if row is not None else None
    return None if limits is None else sorted(limits)


def describe_limits(limits: Limits | None) -> str:
    """The limits as the admin and ``apikey list`` show them: ``all``, or ``a, b:prod, b:staging``."""
    if limits is None:
        return "all"
    return ", ".join(", ".join(f"{p}:{e}" for e in envs) if envs else p for p, envs in limits.items()) or "none"


def resolve(presented: str) -> ResolvedKey | None:
    """The key ``presented`` is, if it is current: not revoked, not expired, not rotated out past
    its grace. Read from the database every time (no cache), so a revocation holds at once."""
    match = _KEY.match(presented)
    if match is None or int(match.group(1)) > MAX_ID:
        return None
    presented_hash = digest(match.group(2))
    now = timezone.now()
    row = (ApiKey.objects.filter(pk=int(match.group(1)), revoked__isnull=True)
           .filter(Q(expires__isnull=True) | Q(expires__gt=now)).first())
    if row is None:
        # Compared anyway, so the time does not tell ids that exist from the rest.
        hmac.compare_digest(presented_hash, presented_hash)
        return None
    current = hmac.compare_digest(presented_hash, row.secret_hash)
    previous = bool(row.previous_hash) and hmac.compare_digest(presented_hash, row.previous_hash)
    in_grace = row.previous_until is not None and row.previous_until > now
    if not (current or (previous and in_grace)):
        return None
    minute = now.replace(second=0, microsecond=0)
    if row.last_used is None or row.last_used < minute:
        # last_used to the minute, written at most once a minute per key.
        ApiKey.objects.filter(pk=row.pk).update(last_used=minute)
    return ResolvedKey(row.name, frozenset(row.scopes), limits_of(row.projects))
