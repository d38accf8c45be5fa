"""``drift.detected`` once per new drift: the drift each secret last showed, by fingerprint.

A drift check records, per secret that drifts, a digest of what it found (never a value: the
findings name targets and reasons), and forgets the secrets it checked that no longer drift. A
secret is new drift when it had no row, or a row with another digest: the event names those
only, so an unchanged drift found on every scheduled run is sent once, and again when it
changes, or after it was resolved and comes back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from webhooks.models import DriftSeen


@dataclass(frozen=True)
class DriftFound:
    """One drift check's findings: ``scope`` (its definition, environment and var files),
    ``checked`` (the one secret named, or None: every secret) and each drifting secret's digest."""

    scope: str
    checked: str | None
    digests: Mapping[str, str]


def scope_of(definition: str, environment: str | None, var_files: Sequence[str]) -> str:
    text = json.dumps([definition, environment, list(var_files)])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def digest(findings: Sequence[Any]) -> str:
    """A digest of one secret's findings (their messages and details, in a stable order)."""
    text = json.dumps(sorted(json.dumps(f, sort_keys=True, default=str) for f in findings))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def new_drift(found: DriftFound) -> list[str]:
    """Record ``found`` (in the caller's transaction); the secrets whose drift is new or changed."""
    now = timezone.now()
    rows = DriftSeen.objects.filter(scope=found.scope)
    checked = rows if found.checked is None else rows.filter(secret=found.checked)
    checked.exclude(secret__in=list(found.digests)).delete()  # resolved: a later drift is new again
    known = dict(rows.filter(secret__in=list(found.digests)).values_list("secret", "digest"))
    fresh = [name for name, value in found.digests.items() if known.get(name) != value]
    for name in list(fresh):
        try:
            with transaction.atomic():
                DriftSeen.objects.update_or_create(scope=found.scope, secret=name,
                                                   defaults={"digest": found.digests[name], "seen_at": now})
        except IntegrityError:  # another check recorded it first: it sends the event
            fresh.remove(name)
    return fresh
