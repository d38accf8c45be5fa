"""Units: how checked secrets and templates become lockfile units, placements and a canonical form."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from secretsapi.service.definition.model import GeneratorSpec, Placement, TargetSpec, Unit


@dataclass
class Template:
    """A checked template: each field's generator and own targets, the shared targets, and the
    canonical form that the definition hash of a secret using it covers."""

    fields: dict[str, tuple[GeneratorSpec, tuple[TargetSpec, ...]]]
    targets: tuple[TargetSpec, ...]
    canonical: dict[str, Any]


def canon_targets(targets: Sequence[TargetSpec]) -> list[dict[str, Any]]:
    return [{"provider": t.provider, "kind": t.kind, "config": dict(t.config)} for t in targets]


def canon_gen(spec: GeneratorSpec) -> dict[str, Any]:
    return {"kind": spec.kind, "config": dict(spec.config)}


def template_units(name: str, template: Template, own: tuple[TargetSpec, ...]) -> tuple[Unit, ...]:
    units = []
    for field_name, (generator, field_targets) in template.fields.items():
        # Field targets may choose their key; shared targets always store the field name.
        placements = [place(t, str(t.config.get("key") or field_name), shared=False) for t in field_targets]
        placements += [place(t, field_name, shared=True) for t in (*template.targets, *own)]
        units.append(Unit(lock_key=f"{name}.{field_name}", generator=generator, placements=tuple(placements)))
    return tuple(units)


def place(target: TargetSpec, key: str, *, shared: bool) -> Placement:
    """A placement whose target config names the key where the kind's id depends on it.

    A Kubernetes Secret's data key defaults to the secret's (or field's) name, and is part of
    the target id; a template's shared Vault target stores each field under its own name
    rather than the single default key, so fields do not overwrite each other.
    """
    config = target.config
    if target.type == "kubernetes/kubernetes_secret" and not (config.get("data_key") or config.get("key")):
        target = replace(target, config={**config, "data_key": key})
    elif shared and target.type == "vault/vault_kv" and not config.get("key"):
        target = replace(target, config={**config, "key": key})
    return Placement(target, key)
