"""Read a secret's current value back from its targets, checked against the lockfile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from secretsapi.service.definition.model import Unit
from secretsapi.service.results import RevealedSecret
from secretsapi.service.state.lock_state import read_state
from secretsapi.service.state.readback import UnitReadBack, read_back_all
from secretsapi.service.status import secret_status, summary
from secretsapi.service.targets import TargetContext
from secretsapi.service.workspace import Workspace


@dataclass(frozen=True)
class UnitValue:
    value: str | None
    source: str | None  # the target id it was read from
    verified: bool  # its hash equals the lockfile's
    message: str


def read_value(ws: Workspace, name: str) -> RevealedSecret:
    definition = ws.definition()
    secret = definition.secret(name)
    doc = read_state(ws.lockfiles, definition)
    ctx = TargetContext.of(definition)
    values: dict[str, UnitValue] = {}
    recorded: list[tuple[Unit, str]] = []
    for unit in secret.units:
        entry = doc.entry(unit.lock_key)
        if entry is None:
            values[unit.lock_key] = UnitValue(None, None, False, "not generated")
        else:
            recorded.append((unit, entry.hash))
    # A template secret's fields are read concurrently (``fanout``), each in its targets' order.
    for (unit, _), found in zip(recorded, read_back_all(recorded, ctx), strict=True):
        values[unit.lock_key] = _value(found)
    values = {unit.lock_key: values[unit.lock_key] for unit in secret.units}
    value: Any
    if secret.template is None:
        value = values[secret.name].value
    else:
        value = {key.split(".", 1)[1]: found.value for key, found in values.items()}
    return RevealedSecret(
        definition=summary(secret),
        status=secret_status(ws, name),
        value=value,
        verified=all(v.verified for v in values.values()),
        sources={key: v.source for key, v in values.items()},
        messages=[f"{key}: {v.message}" for key, v in values.items()],
    )


def _value(found: UnitReadBack) -> UnitValue:
    if found.recorded is not None:
        source = found.recorded.target_id
        return UnitValue(found.recorded.value, source, True, f"read from {source}, matches the lockfile")
    if found.other is not None:
        # Reported, not hidden: the caller sees the value and that it is not the recorded one.
        source = found.other.target_id
        return UnitValue(found.other.value, source, False,
                         f"read from {source}, but its hash differs from the lockfile (drift)")
    detail = "; ".join(found.problems) if found.problems else "no target holds a readable value"
    return UnitValue(None, None, False, detail)
