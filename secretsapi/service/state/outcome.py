"""What a write stored: each unit's new hash and targets (``Written``), the outcome of a whole
write (``StoreOutcome``), and how results and errors name the targets written (never a value)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from secretsapi.service.definition.model import SecretDef
from secretsapi.service.errors import LockfileUnwritable, LockLost
from secretsapi.service.results import OperationError


@dataclass(frozen=True)
class Written:
    """What the lockfile must learn about one unit: its new value's hash and where it is."""

    secret: SecretDef
    lock_key: str
    value_hash: str
    targets: dict[str, str]  # target id -> recorded hash, in definition order
    # A token created at its source for this value: its record (``generators.tokens``), never the token.
    issued: dict[str, Any] | None = None


@dataclass
class StoreOutcome:
    stored: list[str] = field(default_factory=list)  # secrets whose new value is recorded
    failed: list[str] = field(default_factory=list)  # secrets whose new value is stored nowhere
    errors: list[OperationError] = field(default_factory=list)
    written: list[Written] = field(default_factory=list)
    # Secrets whose value was imported, not generated: name -> source kind (``env`` for the
    # environment override too). Audit rows name them; the value never appears.
    sources: dict[str, str] = field(default_factory=dict)
    # Units rewritten beside the work (``_exclusive_companions``) with their unchanged values:
    # the hashes their targets now hold (a template output's changes with the other units').
    companions: list[Written] = field(default_factory=list)
    # The repairs written beside the work (``store``'s ``repairs``): lock key -> {target id: hash}.
    repaired: dict[str, dict[str, str]] = field(default_factory=dict)
    # Tokens created at their source that no target took (their secret failed): revoke them.
    unused_tokens: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def written_targets(
    outcome: StoreOutcome, *, partial_only: bool, hide: Callable[[str], str] = lambda text: text,
) -> dict[str, list[str]]:
    """Lock key -> the target ids that hold the unit's new value: for every unit written, or
    (``partial_only``) for the units of secrets a target failed for. ``hide`` rewrites each id
    (a path built from the environment is shown by its expression, never the value)."""
    troubled = {error.secret for error in outcome.errors}
    return {item.lock_key: [hide(target) for target in item.targets] for item in outcome.written
            if not partial_only or item.secret.name in troubled}


# Units named in the audit facts of a write that stopped after its targets were written.
WRITTEN_LISTED = 100


def after_writes(exc: LockfileUnwritable | LockLost,
                 written: Mapping[str, list[str]]) -> LockfileUnwritable | LockLost:
    """``exc`` (the lockfile failed, or a lock was lost) once targets took new values: its
    message says how many, its details which (``written``: lock key -> target ids)."""
    targets = sum(len(ids) for ids in written.values())
    details: dict[str, object] = {"written_targets": dict(list(written.items())[:WRITTEN_LISTED])}
    if len(written) > WRITTEN_LISTED:
        details["written_targets_not_listed"] = len(written) - WRITTEN_LISTED
    return type(exc)(f"{exc.message}; {targets} target(s) now hold new values the lockfile does not "
                     "record (the audit row lists them)", details)
