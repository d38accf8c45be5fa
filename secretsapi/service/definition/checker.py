"""The definition checker: walks a parsed document, collecting errors and warnings by place."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from secretsapi.service.definition.interpolation import Interpolator, deep_merge
from secretsapi.service.definition.model import (
    GeneratorSpec,
    Placement,
    PolicySpec,
    ProviderSpec,
    SecretDef,
    TargetSpec,
    Unit,
)
from secretsapi.service.definition.periods import parse_period
from secretsapi.service.generators import GENERATORS, validate_generator
from secretsapi.service.util.hashing import sha256_value

TOP_LEVEL_KEYS = ("version", "variables", "metadata", "providers", "secrets", "templates", "policies")
SECRET_KEYS = ("name", "kind", "config", "rotation_period", "one_time", "targets", "description")
TARGET_KEYS = ("provider", "kind", "config")
PROVIDER_KEYS = ("kind", "auth", "config")
TEMPLATE_KEYS = ("description", "fields", "targets")
FIELD_KEYS = ("description", "generator", "targets")
POLICY_KINDS = ("rotation", "access", "compliance")
SEVERITIES = ("error", "warning", "info")
STANDARDS = ("soc2", "iso27001")
TEMPLATE_PREFIX = "templates."
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass
class _Template:
    fields: dict[str, tuple[GeneratorSpec, tuple[TargetSpec, ...]]]
    targets: tuple[TargetSpec, ...]
    canonical: dict[str, Any]


@dataclass
class ParsedDefinition:
    version: str | None = None
    merged_variables: dict[str, Any] = field(default_factory=dict)
    variables: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    providers: dict[str, ProviderSpec] = field(default_factory=dict)
    secrets: list[SecretDef] = field(default_factory=list)
    policies: dict[str, PolicySpec] = field(default_factory=dict)


class DefinitionChecker:
    """Walks a parsed document once, collecting errors and warnings that name the place."""

    def __init__(self, environ: Mapping[str, str], *, strict: bool) -> None:
        self.environ = environ
        self.strict = strict  # /config/validate: version and secrets required, rotation warnings
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self._interpolator = Interpolator({}, environ)
        self._provider_kinds: dict[str, str] = {}  # alias -> kind, for targets naming an alias
        self._configs: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._consume = False

    def check(
        self, doc: Any, overlays: Sequence[Mapping[str, Any]] = (), *, consume: bool = False
    ) -> ParsedDefinition:
        """``consume``: the caller hands ``doc`` over (it is emptied), so each raw secret is let
        go once checked and the document and its result are never both whole in memory (for
        20,000 secrets, ~18 and ~14 MB)."""
        out = ParsedDefinition()
        if not isinstance(doc, Mapping):
            got = "an empty document" if doc is None else f"a {type(doc).__name__}"
            self.errors.append(f"definition must be a mapping, got {got}")
            return out
        for key in doc:
            if key not in TOP_LEVEL_KEYS:
                self.warnings.append(f"unknown top-level key '{key}' (kept, not used)")
        for key in ("version", "secrets") if self.strict else ():
            if key not in doc:
                self.errors.append(f"Missing required field: {key}")
        for key in TOP_LEVEL_KEYS:
            self._check_plain(doc.get(key), key)
        if doc.get("version") is not None:
            if isinstance(doc["version"], bool) or not isinstance(doc["version"], str | int | float):
                self.errors.append("version: must be a string")
            out.version = str(doc["version"])
        variables = self._mapping(doc.get("variables"), "variables")
        out.merged_variables = deep_merge(variables, *overlays)
        self._interpolator = interpolator = Interpolator(out.merged_variables, self.environ)
        out.variables = interpolator.variables
        # Everything but `variables` (resolved above) and unknown keys is interpolated.
        sections = {k: interpolator.render(doc.get(k), k) for k in TOP_LEVEL_KEYS[2:]}
        self.errors.extend(interpolator.errors)
        if consume and isinstance(doc, dict):
            self._consume = True
            doc.clear()  # the sections hold what is still needed
        out.metadata = self._metadata(sections["metadata"])
        out.providers = self._providers(sections["providers"])
        self._provider_kinds = {alias: spec.kind for alias, spec in out.providers.items()}
        templates = self._templates(sections["templates"])
        out.secrets = self._secrets(sections["secrets"], templates)
        out.policies = self._policies(sections["policies"])
        return out

    # -- helpers ---------------------------------------------------------------------------

    def _check_plain(self, value: Any, where: str) -> None:
        """JSON-like values only: string keys, no sets or binary, so hashing is well defined."""
        # Strings, the usual leaf, are passed over before a place is named for them.
        if isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(key, str):
                    self.errors.append(f"{where}: keys must be strings")
                    return
                if type(item) is not str:
                    self._check_plain(item, f"{where}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if type(item) is not str:
                    self._check_plain(item, f"{where}[{index}]")
        elif value is not None and not isinstance(value, str | int | float):
            self.errors.append(f"{where}: unsupported value of type {type(value).__name__}")

    def _shared(self, config: dict[str, Any]) -> dict[str, Any]:
        """One dict for every equal config of scalars: thousands of secrets share a handful of
        target files and generator options. Keyed with the values' types (1 and true differ)."""
        key = tuple((k, type(v), v) for k, v in config.items())
        try:
            return self._configs.setdefault(key, config)
        except TypeError:  # a nested list or mapping: kept as it is
            return config

    def _shown(self, value: Any, where: str) -> str:
        # Interpolated values may come from the server's environment: never echo them.
        return self._interpolator.shown(value, where)

    def _period(self, value: Any, where: str) -> int | None:
        try:
            return parse_period(value)
        except ValueError as exc:
            self.errors.append(f"{where}: {str(exc).replace(repr(value), self._shown(value, where), 1)}")
            return None

    def _mapping(self, value: Any, where: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.errors.append(f"{where}: must be a mapping")
            return {}
        # The parsed document's own dicts, not copies: nothing edits them, and a copy of every
        # config mapping was ~10 MB for 20,000 secrets.
        return value if type(value) is dict else dict(value)

    def _unknown(self, value: Mapping[str, Any], known: Sequence[str], where: str) -> None:
        for key in value:
            if key not in known:
                self.warnings.append(f"{where}: unknown key '{key}' (ignored)")

    def _required_str(self, value: Mapping[str, Any], key: str, where: str) -> str | None:
        item = value.get(key)
        if item is None or item == "":
            self.errors.append(f"{where}.{key}: required")
            return None
        if not isinstance(item, str):
            self.errors.append(f"{where}.{key}: must be a string")
            return None
        return item

    def _bool(self, value: Mapping[str, Any], key: str, default: bool, where: str) -> bool:
        item = value.get(key)
        if item is None:
            return default
        if not isinstance(item, bool):
            self.errors.append(f"{where}.{key}: must be true or false")
            return default
        return item

    def _targets(self, value: Any, where: str) -> tuple[TargetSpec, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            self.errors.append(f"{where}: must be a list")
            return ()
        targets = []
        for index, raw in enumerate(value):
            place = f"{where}[{index}]"
            if not isinstance(raw, Mapping):
                self.errors.append(f"{place}: must be a mapping")
                continue
            self._unknown(raw, TARGET_KEYS, place)
            provider = self._required_str(raw, "provider", place)
            kind = self._required_str(raw, "kind", place)
            config = self._shared(self._mapping(raw.get("config"), f"{place}.config"))
            if provider and kind:
                aliased = self._provider_kinds.get(provider, provider)
                targets.append(TargetSpec(provider=provider, kind=kind, config=config,
                                          provider_kind=aliased if aliased != provider else None))
        return tuple(targets)

    def _generator(self, kind: Any, config: Any, where: str) -> GeneratorSpec | None:
        if not isinstance(kind, str) or not kind:
            self.errors.append(f"{where}.kind: required")
            return None
        spec = GeneratorSpec(kind=kind, config=self._shared(self._mapping(config, f"{where}.config")))
        problems = validate_generator(spec, where, interpolated=self._interpolator.interpolated)
        self.errors.extend(problems)
        if kind in GENERATORS and isinstance(config, Mapping):
            for key in config:
                if key not in GENERATORS[kind]["options"]:
                    self.warnings.append(f"{where}.config: unknown option '{key}' for {kind} (ignored)")
        return None if problems else spec

    # -- sections --------------------------------------------------------------------------

    def _metadata(self, value: Any) -> dict[str, Any]:
        metadata = self._mapping(value, "metadata")
        compliance = metadata.get("compliance")
        if compliance is None:
            return metadata
        if not isinstance(compliance, list):
            self.errors.append("metadata.compliance: must be a list")
            return metadata
        normalized = []
        for index, item in enumerate(compliance):
            standard = item.lower() if isinstance(item, str) else item
            if standard not in STANDARDS:
                self.errors.append(
                    f"metadata.compliance[{index}]: unknown standard "
                    f"{self._shown(item, f'metadata.compliance[{index}]')} (expected soc2 or iso27001)"
                )
            normalized.append(standard)
        # Lower-cased so the policy check can compare names directly.
        return {**metadata, "compliance": normalized}

    def _providers(self, value: Any) -> dict[str, ProviderSpec]:
        providers = {}
        for alias, raw in self._mapping(value, "providers").items():
            where = f"providers.{alias}"
            raw = self._mapping(raw, where)
            self._unknown(raw, PROVIDER_KEYS, where)
            kind = raw.get("kind", alias)
            if not isinstance(kind, str) or not kind:
                self.errors.append(f"{where}.kind: must be a string")
                continue
            auth = self._mapping(raw.get("auth"), f"{where}.auth")
            config = self._mapping(raw.get("config"), f"{where}.config")
            providers[alias] = ProviderSpec(alias=alias, kind=kind, auth=auth, config=config)
        return providers

    def _templates(self, value: Any) -> dict[str, _Template]:
        templates = {}
        for name, raw in self._mapping(value, "templates").items():
            where = f"templates.{name}"
            raw = self._mapping(raw, where)
            self._unknown(raw, TEMPLATE_KEYS, where)
            fields = self._mapping(raw.get("fields"), f"{where}.fields")
            if not fields:
                self.errors.append(f"{where}.fields: a template needs at least one field")
            parsed: dict[str, tuple[GeneratorSpec, tuple[TargetSpec, ...]]] = {}
            canonical: dict[str, Any] = {}
            for field_name, raw_field in fields.items():
                place = f"{where}.fields.{field_name}"
                if not _NAME.fullmatch(str(field_name)):
                    self.errors.append(f"{place}: '{field_name}' is not a valid field name")
                raw_field = self._mapping(raw_field, place)
                self._unknown(raw_field, FIELD_KEYS, place)
                generator = self._mapping(raw_field.get("generator"), f"{place}.generator")
                spec = self._generator(generator.get("kind"), generator.get("config"), f"{place}.generator")
                targets = self._targets(raw_field.get("targets"), f"{place}.targets")
                if spec is not None:
                    parsed[field_name] = (spec, targets)
                    canonical[field_name] = {
                        "generator": _canon_gen(spec),
                        "targets": _canon_targets(targets),
                    }
            shared = self._targets(raw.get("targets"), f"{where}.targets")
            templates[name] = _Template(
                parsed, shared, {"fields": canonical, "targets": _canon_targets(shared)}
            )
        return templates

    def _secrets(self, value: Any, templates: dict[str, _Template]) -> list[SecretDef]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.errors.append("secrets: must be a list")
            return []
        secrets: list[SecretDef] = []
        names: dict[str, str] = {}
        lock_keys: dict[str, str] = {}
        for index, raw in enumerate(value):
            if self._consume:
                value[index] = None
            where = f"secrets[{index}]"
            if not isinstance(raw, Mapping):
                self.errors.append(f"{where}: must be a mapping")
                continue
            before = len(self.errors)
            secret = self._secret(raw, where, templates, names)
            if secret is None or len(self.errors) > before:
                continue
            for unit in secret.units:
                if unit.lock_key in lock_keys:
                    self.errors.append(
                        f"{where}: its lockfile key {self._shown(unit.lock_key, f'{where}.name')} "
                        f"is also used by {lock_keys[unit.lock_key]}"
                    )
                lock_keys.setdefault(unit.lock_key, where)
            secrets.append(secret)
        return secrets

    def _secret(
        self, raw: Mapping[str, Any], where: str, templates: dict[str, _Template], names: dict[str, str]
    ) -> SecretDef | None:
        self._unknown(raw, SECRET_KEYS, where)
        name = self._required_str(raw, "name", where)
        if name is not None:
            if not _NAME.fullmatch(name):
                self.errors.append(
                    f"{where}.name: {self._shown(name, f'{where}.name')} is not a valid name "
                    "(letters, digits, '_', '.', '-')"
                )
            elif name in names:
                shown = self._shown(name, f"{where}.name")
                self.errors.append(f"{where}.name: duplicate secret name {shown} (first at {names[name]})")
            names.setdefault(name, where)
        kind = self._required_str(raw, "kind", where)
        config = self._shared(self._mapping(raw.get("config"), f"{where}.config"))
        template: _Template | None = None
        generator: GeneratorSpec | None = None
        if kind is not None and kind.startswith(TEMPLATE_PREFIX):
            template = templates.get(kind[len(TEMPLATE_PREFIX) :])
            if template is None:
                shown = self._shown(kind[len(TEMPLATE_PREFIX) :], f"{where}.kind")
                self.errors.append(f"{where}.kind: unknown template {shown}")
        elif kind is not None and kind not in GENERATORS:
            expected = ", ".join(GENERATORS)
            self.errors.append(
                f"{where}.kind: unknown kind {self._shown(kind, f'{where}.kind')} "
                f"(expected one of {expected}, or templates.<name>)"
            )
        elif kind is not None:
            generator = self._generator(kind, raw.get("config"), where)
        period = raw.get("rotation_period")
        days = None if period is None else self._period(period, f"{where}.rotation_period")
        if period is None and self.strict:
            label = f"{where} {self._shown(name, f'{where}.name')}" if name else where
            self.warnings.append(f"{label}: no rotation_period defined")
        one_time = self._bool(raw, "one_time", False, where)
        description = raw.get("description")
        if description is not None and not isinstance(description, str):
            self.errors.append(f"{where}.description: must be a string")
        targets = self._targets(raw.get("targets"), f"{where}.targets")
        if name is None or kind is None or (template is None and generator is None):
            return None
        canonical: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "config": config,
            "rotation_period": period,
            "one_time": one_time,
            "targets": _canon_targets(targets),
        }
        if template is not None:
            units = _template_units(name, template, targets)
            canonical["template"] = template.canonical
        else:
            assert generator is not None
            placements = tuple(_place(t, str(t.config.get("key") or name), shared=False) for t in targets)
            units = (Unit(lock_key=name, generator=generator, placements=placements),)
        return SecretDef(
            name=name,
            kind=kind,
            config=config,
            rotation_period=period,
            rotation_days=days,
            one_time=one_time,
            targets=targets,
            description=description,
            units=units,
            definition_hash=sha256_value(canonical),
            template=kind[len(TEMPLATE_PREFIX) :] if template is not None else None,
        )

    def _policies(self, value: Any) -> dict[str, PolicySpec]:
        policies = {}
        for name, raw in self._mapping(value, "policies").items():
            where = f"policies.{name}"
            raw = self._mapping(raw, where)
            kind = raw.get("kind")
            if kind not in POLICY_KINDS:
                self.errors.append(f"{where}.kind: must be one of {', '.join(POLICY_KINDS)}")
                continue
            severity = raw.get("severity", "error")
            if severity not in SEVERITIES:
                self.errors.append(f"{where}.severity: must be one of {', '.join(SEVERITIES)}")
            enabled = self._bool(raw, "enabled", True, where)
            options = {k: v for k, v in raw.items() if k not in ("kind", "severity", "enabled")}
            self._policy_options(kind, options, where)
            policies[name] = PolicySpec(
                name=name, kind=kind, severity=str(severity), enabled=enabled, options=options
            )
        return policies

    def _policy_options(self, kind: str, options: dict[str, Any], where: str) -> None:
        if kind == "rotation":
            if options.get("max_age") is not None:
                self._period(options["max_age"], f"{where}.max_age")
            self._bool(options, "require_rotation_period", False, where)
        elif kind == "compliance":
            standard = options.get("standard")
            lowered = standard.lower() if isinstance(standard, str) else standard
            if lowered not in STANDARDS:
                self.errors.append(f"{where}.standard: must be soc2 or iso27001")
            else:
                options["standard"] = lowered
        else:
            for key in ("allowed_targets", "denied_targets"):
                listed = options.get(key)
                if listed is not None and (
                    not isinstance(listed, list) or not all(isinstance(i, str) for i in listed)
                ):
                    self.errors.append(f"{where}.{key}: must be a list of target kinds")


def _canon_targets(targets: Sequence[TargetSpec]) -> list[dict[str, Any]]:
    return [{"provider": t.provider, "kind": t.kind, "config": dict(t.config)} for t in targets]


def _canon_gen(spec: GeneratorSpec) -> dict[str, Any]:
    return {"kind": spec.kind, "config": dict(spec.config)}


def _template_units(name: str, template: _Template, own: tuple[TargetSpec, ...]) -> tuple[Unit, ...]:
    units = []
    for field_name, (generator, field_targets) in template.fields.items():
        # Field targets may choose their key; shared targets always store the field name.
        placements = [_place(t, str(t.config.get("key") or field_name), shared=False) for t in field_targets]
        placements += [_place(t, field_name, shared=True) for t in (*template.targets, *own)]
        units.append(Unit(lock_key=f"{name}.{field_name}", generator=generator, placements=tuple(placements)))
    return tuple(units)


def _place(target: TargetSpec, key: str, *, shared: bool) -> Placement:
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
