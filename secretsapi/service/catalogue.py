"""What the engine offers, for the discovery endpoints: generator kinds, secret types, target and provider kinds."""

from __future__ import annotations

from typing import Any

from secretsapi.service.definition.model import Definition
from secretsapi.service.generators import GENERATORS
from secretsapi.service.targets.catalogue import declared_providers, provider_catalogue, target_catalogue

__all__ = ["declared_providers", "generator_catalogue", "provider_catalogue", "secret_types", "target_catalogue"]


def _options(options: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": name, **spec} for name, spec in options.items()]


def generator_catalogue() -> list[dict[str, Any]]:
    return [
        {"kind": kind, "description": spec["description"], "options": _options(spec.get("options", {}))}
        for kind, spec in GENERATORS.items()
    ]


def secret_types(definition: Definition | None) -> list[dict[str, Any]]:
    """Every generator kind, plus the definition's templates (``templates.<name>``) if it loads."""
    types = [{**entry, "template": False, "fields": []} for entry in generator_catalogue()]
    if definition is not None:
        for name, fields in _templates(definition).items():
            types.append({"kind": f"templates.{name}", "description": f"Template with {len(fields)} field(s).",
                          "options": [], "template": True, "fields": fields})
    return types


def _templates(definition: Definition) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for secret in definition.secrets:
        if secret.template is not None:
            found.setdefault(secret.template, [u.lock_key.split(".", 1)[1] for u in secret.units])
    return found
