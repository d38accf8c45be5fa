"""What the engine offers, for the discovery endpoints: generator kinds, secret types, target and
provider kinds (each from its declaration, ``targets.schema``), and the providers a definition
declares (never a credential)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from secretsapi.service.credentials.spec import CATALOGUE as CREDENTIAL_CATALOGUE
from secretsapi.service.definition.model import Definition
from secretsapi.service.generators import GENERATORS
from secretsapi.service.targets.redaction import redacted_auth, redacted_config
from secretsapi.service.targets.registry import kinds, provider_kinds
from secretsapi.service.targets.schema import option_list

__all__ = ["declared_providers", "generator_catalogue", "provider_catalogue", "secret_types", "target_catalogue"]


def generator_catalogue() -> list[dict[str, Any]]:
    return [
        {"kind": kind, "description": spec["description"], "options": option_list(spec.get("options", {}))}
        for kind, spec in {**GENERATORS, **CREDENTIAL_CATALOGUE}.items()
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


def target_catalogue() -> list[dict[str, Any]]:
    """Every registered target kind: ``{type, provider, kind, description, config: [option], schema}``.

    An option is ``{name, type, default, description}``, as in the generator catalogue; ``schema``
    is the JSON Schema of a target's ``config``.
    """
    catalogue = []
    for kind in kinds():
        described = kind.describe()
        provider, _, name = kind.type.partition("/")
        catalogue.append({
            "type": kind.type, "provider": provider, "kind": name,
            "description": described.get("description", ""),
            "config": option_list(described.get("config", {})),
            "schema": kind.schema.json_schema(),
        })
    return catalogue


def _offered(provider_kind: str) -> list[str]:
    return [kind.type for kind in kinds() if kind.type.partition("/")[0] == provider_kind]


def provider_catalogue() -> list[dict[str, Any]]:
    """Every provider kind: ``{kind, description, config, auth_kinds, auth_config, targets, schema}``.

    ``config`` and ``auth_config`` are option lists; ``targets`` the target types it offers;
    ``schema`` the JSON Schema of a ``providers:`` entry of the kind.
    """
    return [
        {"kind": p.kind, "description": p.description,
         "config": option_list({k: s.option() for k, s in p.config.items()}),
         "auth_kinds": list(p.auth_kind_names),
         "auth_config": option_list({k: s.option() for k, s in p.auth_config.items()}),
         "targets": _offered(p.kind), "schema": p.json_schema()}
        for p in provider_kinds()
    ]


def declared_providers(definition: Definition) -> list[dict[str, Any]]:
    """The definition's ``providers:`` entries, never a credential.

    ``{alias, kind, known, config, auth_kind, auth_keys, targets}``: ``config`` with values
    under credential-like keys replaced by ``***`` (and URL user info too); of the auth block
    only its kind and the names of its settings.
    """
    known = {p.kind for p in provider_kinds()}
    declared = []
    for alias, spec in definition.providers.items():
        auth = redacted_auth(spec.auth)
        auth_kind = spec.auth.get("kind") if isinstance(spec.auth, Mapping) else None
        options = auth.get("config")
        keys = sorted({k for k in auth if k not in ("kind", "config")}
                      | set(options if isinstance(options, dict) else ()))
        declared.append({
            "alias": alias,
            "kind": spec.kind,
            "known": spec.kind in known,
            "config": redacted_config(spec.config),
            "auth_kind": auth_kind if isinstance(auth_kind, str) else None,
            "auth_keys": keys,
            "targets": _offered(spec.kind),
        })
    return declared
