"""The target ids SecretZero records, accepted wherever a lockfile it wrote is read.

The kinds with an id of their own in the spec record it, unique per target
(``vault/vault_kv/<mount>/<path>``, ``kubernetes/kubernetes_secret/<namespace>/<secret>/<data_key>``);
the others record SecretZero's (``SyncEngine._build_target_id``: ``<provider>/<kind>/`` and the
first of ``target_id``, ``record_uid``, ``name``, ``path``, ``title``), so a lockfile reads the
same to both. Where two targets of one secret would share SecretZero's id (two repositories of a
GitHub secret: SecretZero keeps one key for both, and so loses one), each of them records its
own descriptive id instead. Older SecretZero files record every file target of a provider as
``<provider>/file/``; a target recorded under any of these is the same target.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from secretsapi.service.definition.model import TargetSpec
from secretsapi.service.targets.base import TargetContext

_IDENTIFIER_KEYS = ("target_id", "record_uid", "name", "path", "title")


def secretzero_target_id(target: TargetSpec) -> str:
    """SecretZero's ``SyncEngine._build_target_id`` for ``target``."""
    config = target.config
    if target.kind == "file":
        identifier = config.get("path", "")
    else:
        identifier = next((config[key] for key in _IDENTIFIER_KEYS if config.get(key)), "")
    return f"{target.provider}/{target.kind}/{identifier}"


def recorded_id(target: TargetSpec, own: str) -> str:
    """The id a kind that follows SecretZero records: SecretZero's, or ``own`` when shared."""
    return own if target.shares_secretzero_id else secretzero_target_id(target)


class _Located(Protocol):
    def location(self, target: TargetSpec, ctx: TargetContext) -> str: ...

    def own_id(self, target: TargetSpec, ctx: TargetContext) -> str: ...


class RecordsSecretZeroIds:
    """The ids of a kind without one of its own in the spec: SecretZero's, or its descriptive
    ``own_id`` (``<provider>/<kind>/<location>``) where two targets of a secret share SecretZero's.
    The kind gives ``location``."""

    def target_id(self: _Located, target: TargetSpec, ctx: TargetContext) -> str:
        return recorded_id(target, self.own_id(target, ctx))

    def own_id(self: _Located, target: TargetSpec, ctx: TargetContext) -> str:
        """Recorded where SecretZero's id would be shared; read as this target's in lockfiles an
        earlier version of this service wrote (it recorded these for every target)."""
        return f"{target.provider}/{target.kind}/{self.location(target, ctx)}"


def mark_shared(targets: Sequence[TargetSpec]) -> tuple[TargetSpec, ...]:
    """``targets`` (one secret's), each marked when another has the same SecretZero id."""
    counts = Counter(secretzero_target_id(target) for target in targets)
    return tuple(replace(target, shares_secretzero_id=counts[secretzero_target_id(target)] > 1)
                 for target in targets)
