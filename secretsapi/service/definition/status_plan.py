"""What a status reads from the definition, and nothing else: small enough to share between processes.

A status of every secret needs each secret's name, lockfile keys and rotation period, the
machine-local keys and the environments block (which lane's lockfile); the full definition
of 20,000 secrets is ~100,000 objects, and rebuilding them was a third of ``manage.py status``.
The plan is derived from the definition (``plan_of``) and stored beside it
(``loading.stored``), so a status reads the plan and never the definition.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from secretsapi.service.definition.model import Definition, Environments
from secretsapi.service.util.last_result import LastResult


class PlannedSecret(NamedTuple):
    """One secret (a tuple: 20,000 of them unpickle in C, where frozen objects took ~1 us each)."""

    name: str
    lock_keys: tuple[str, ...]
    # None: never due (a one-time secret, or one without a rotation period).
    due_days: int | None


@dataclass(frozen=True)
class StatusPlan:
    secrets: tuple[PlannedSecret, ...]
    local_keys: frozenset[str]
    environments: Environments
    # False when the definition took values from the environment: the lockfile's target ids may
    # then hold them, so what is read of it stays in this process (``state.status_index``).
    shareable: bool = True
    # ``metadata.project`` when it is text: audit rows name it.
    project: str | None = None

    def get(self, name: str) -> PlannedSecret | None:
        return self._by_name().get(name)

    def _by_name(self) -> Mapping[str, PlannedSecret]:
        return _by_name.get(self, lambda plan: {s.name: s for s in plan.secrets})


_by_name: LastResult[StatusPlan, Mapping[str, PlannedSecret]] = LastResult()
_plans: LastResult[Definition, StatusPlan] = LastResult()


def plan_of(definition: Definition) -> StatusPlan:
    """The definition's plan (the same object while the same definition comes back)."""
    return _plans.get(definition, _derive)


def _derive(definition: Definition) -> StatusPlan:
    return StatusPlan(
        secrets=tuple(
            PlannedSecret(s.name, tuple(unit.lock_key for unit in s.units),
                          None if s.one_time else s.rotation_days)
            for s in definition.secrets
        ),
        local_keys=frozenset(unit.lock_key for s in definition.secrets if s.local for unit in s.units),
        environments=definition.environments,
        shareable=not definition.environment_values,
        project=_project(definition.metadata),
    )


def _project(metadata: Mapping[str, object]) -> str | None:
    project = metadata.get("project") if isinstance(metadata, Mapping) else None
    return project if isinstance(project, str) and project else None
