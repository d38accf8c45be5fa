"""Discovery data: target kinds, provider kinds and the providers a definition declares."""

from __future__ import annotations

import re
from typing import Any

from ..model import Definition
from .registry import kinds

PROVIDER_DESCRIPTIONS = {"local": "Files on the service's machine, inside the definition's folder."}
# Settings whose values must never be shown, whatever provider they belong to.
CREDENTIAL = re.compile(r"token|secret|password|passwd|key|credential|auth|cert|session", re.IGNORECASE)


def _options(config: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": name, **spec} for name, spec in config.items()]


def target_catalogue() -> list[dict[str, Any]]:
    out = []
    for kind in kinds():
        described = kind.describe()
        out.append({"type": kind.type, "description": described.get("description", ""),
                    "config": _options(described.get("config", {}))})
    return out


def provider_catalogue() -> list[dict[str, Any]]:
    by_provider: dict[str, list[str]] = {}
    for kind in kinds():
        by_provider.setdefault(kind.type.split("/", 1)[0], []).append(kind.type)
    return [
        {"kind": provider, "description": PROVIDER_DESCRIPTIONS.get(provider, f"{provider} provider"),
         "config": [], "targets": types}
        for provider, types in by_provider.items()
    ]


def declared_providers(definition: Definition) -> list[dict[str, Any]]:
    return [
        {
            "alias": spec.alias,
            "kind": spec.kind,
            "config": {k: ("***" if CREDENTIAL.search(k) else v) for k, v in spec.config.items()},
            "auth_kind": spec.auth.get("kind") if isinstance(spec.auth.get("kind"), str) else None,
            "auth_keys": sorted(str(k) for k in (spec.auth.get("config") or {})),
        }
        for spec in definition.providers.values()
    ]
