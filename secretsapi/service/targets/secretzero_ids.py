"""The target ids SecretZero records, accepted wherever a lockfile it wrote is read.

This service records the spec's ids, unique per target (``vault/vault_kv/<mount>/<path>``,
``kubernetes/kubernetes_secret/<namespace>/<secret>/<data_key>``). SecretZero's
``SyncEngine._build_target_id`` keeps shorter ones for some kinds, and older SecretZero files
record every file target of a provider as ``<provider>/file/``; a target recorded under any of
these is the same target.
"""

from __future__ import annotations

from collections.abc import Mapping

from secretsapi.service.definition.model import TargetSpec

_IDENTIFIER_KEYS = ("target_id", "record_uid", "name", "path", "title")


def secretzero_target_id(target: TargetSpec) -> str:
    """SecretZero's ``SyncEngine._build_target_id`` for ``target``."""
    config = target.config
    if target.kind == "file":
        identifier = config.get("path", "")
    else:
        identifier = next((config[key] for key in _IDENTIFIER_KEYS if config.get(key)), "")
    return f"{target.provider}/{target.kind}/{identifier}"


def aliases(target: TargetSpec) -> tuple[str, ...]:
    """The ids other than ours under which a SecretZero lockfile may record ``target``."""
    found = [secretzero_target_id(target)]
    if target.kind == "file":
        found.append(f"{target.provider}/file/")
    return tuple(found)


def recorded_hash(targets: Mapping[str, str], target_id: str, target: TargetSpec) -> str | None:
    """The hash a lockfile entry's ``targets`` records for ``target`` (ours first), or None."""
    if target_id in targets:
        return targets[target_id]
    return next((targets[alias] for alias in aliases(target) if alias in targets), None)
