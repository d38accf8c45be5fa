"""What the service offers: generators, secret types, target and provider kinds."""

from __future__ import annotations

from typing import Any

from secretsapi import service
from secretsapi.actions.auditing import audited
from secretsapi.actions.workspaces import Workspace, lane
from secretsapi.service.definition.model import Definition
from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound


def _definition_or_none(ws: Workspace) -> Definition | None:
    """Discovery answers even without a usable definition: it then lists only built-ins."""
    try:
        return ws.definition()
    except (DefinitionNotFound, DefinitionInvalid):
        return None


def list_generators(*, actor: str | None) -> list[dict[str, Any]]:
    with audited("list_generators", "generators", actor) as facts:
        generators = service.generator_catalogue()
        facts["count"] = len(generators)
    return generators


def list_secret_types(ws: Workspace, *, actor: str | None) -> list[dict[str, Any]]:
    with audited("list_secret_types", "secret_types", actor, lane(ws), ws=ws) as facts:
        types = service.secret_types(_definition_or_none(ws))
        facts["count"] = len(types)
    return types


def list_targets(*, actor: str | None) -> list[dict[str, Any]]:
    with audited("list_targets", "targets", actor) as facts:
        targets = service.target_catalogue()
        facts["count"] = len(targets)
    return targets


def list_providers(ws: Workspace, *, actor: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Provider kinds, and the providers the definition declares (never their credentials)."""
    with audited("list_providers", "providers", actor, lane(ws), ws=ws) as facts:
        definition = _definition_or_none(ws)
        kinds = service.provider_catalogue()
        declared = service.declared_providers(definition) if definition is not None else []
        facts.update(kinds=len(kinds), declared=len(declared))
    return kinds, declared
