"""How a unit's value last changed: generated, rotated, regenerated (a forced sync) or imported
(``import``, or a value taken from the secret's ``source``).

Kept in the lockfile entry under ``last_change`` (``{"how": ..., "at": <updated_at>}``), beside
SecretZero's keys: SecretZero reads an entry without it and drops it when it rewrites the file,
and another tool may change the value while keeping it. So the record counts only while its
``at`` is the entry's ``updated_at`` (the time the value last changed); otherwise the entry's
own times say what they can: ``rotated`` when ``last_rotated`` is that time, ``generated`` when
``created_at`` is, else ``changed`` (by a tool that does not say how).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KEY = "last_change"
GENERATED = "generated"
ROTATED = "rotated"
REGENERATED = "regenerated"
IMPORTED = "imported"
CHANGED = "changed"
_RECORDED = frozenset({GENERATED, ROTATED, REGENERATED, IMPORTED})


def with_change(extra: Mapping[str, Any], how: str, stamp: str) -> dict[str, Any]:
    """``extra`` recording that the value changed ``how`` at ``stamp`` (the entry's new ``updated_at``)."""
    return {**extra, KEY: {"how": how, "at": stamp}}


def change_of(raw: Mapping[str, Any], *, created_at: str, updated_at: str, last_rotated: str | None) -> str:
    """How the value of the entry ``raw`` (with these times, as read) last changed."""
    record = raw.get(KEY)
    if isinstance(record, Mapping) and record.get("at") == updated_at and record.get("how") in _RECORDED:
        how: str = record["how"]
        return how
    if last_rotated is not None and last_rotated == updated_at:
        return ROTATED
    return GENERATED if updated_at == created_at else CHANGED
