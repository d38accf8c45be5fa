"""The ids a lockfile may record a target under, and the hash it records there.

Besides the id its kind gives (``TargetKind.target_id``): SecretZero's (``ids.secretzero_target_id``),
``<provider>/file/`` for a file target (older SecretZero files), and the kind's own descriptive id
(``TargetKind.own_id``: what an earlier version of this service recorded). A target recorded under
any of these is the same target.
"""

from __future__ import annotations

from collections.abc import Mapping

from secretsapi.service.definition.model import TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.ids import secretzero_target_id
from secretsapi.service.targets.registry import get_kind

__all__ = ["aliases", "recorded_hash", "secretzero_target_id"]


def aliases(target: TargetSpec, ctx: TargetContext) -> tuple[str, ...]:
    """The other ids under which a lockfile may record ``target``: SecretZero's, and for the
    kinds that record SecretZero's, their own (an earlier version of this service recorded it)."""
    found = [secretzero_target_id(target)]
    if target.kind == "file":
        found.append(f"{target.provider}/file/")
    try:
        own = get_kind(target.type).own_id(target, ctx)
    except TargetError:
        own = None  # an unsupported kind: the write reports it
    if own is not None:
        found.append(own)
    return tuple(found)


def recorded_hash(targets: Mapping[str, str], target_id: str, target: TargetSpec,
                  ctx: TargetContext) -> str | None:
    """The hash a lockfile entry's ``targets`` records for ``target`` (ours first), or None."""
    if target_id in targets:
        return targets[target_id]
    return next((targets[alias] for alias in aliases(target, ctx) if alias in targets), None)
