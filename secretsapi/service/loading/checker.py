"""The definition checker: walks a parsed document section by section, collecting errors and warnings by place."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from secretsapi.service.definition.budget import InterpolationLimits
from secretsapi.service.definition.interpolation import Interpolator
from secretsapi.service.definition.model import (
    Environments,
    GeneratorSpec,
    PolicySpec,
    ProviderSpec,
    SecretDef,
    TargetProfile,
    TargetSpec,
    Unit,
)
from secretsapi.service.definition.units import Template, canon_gen, canon_targets, place, template_units
from secretsapi.service.definition.var_files import deep_merge
from secretsapi.service.loading import lanes
from secretsapi.service.loading.field_checks import FieldChecks
from secretsapi.service.util.hashing import sha256_value

TOP_LEVEL_KEYS = ("version", "variables", "metadata", "providers", "secrets", "templates", "policies")
SECRET_KEYS = ("name", "kind", "config", "rotation_period", "one_time", "targets", "description", "source")
# SecretZero's machine-local flag and its escape hatch, parsed by _local.
LOCAL_KEYS = ("local", "local_allow_cloud")
_LOCAL_TARGETS = (("local", "file"), ("local", "template"))
# SecretZero's guidance for people and agents: kept as written (never interpolated), not used.
KEPT_SECRET_KEYS = ("agent_instructions",)
PROVIDER_KEYS = ("kind", "auth", "config")
TEMPLATE_KEYS = ("description", "fields", "targets")
FIELD_KEYS = ("description", "generator", "targets")
# Parsed by ``lanes``, apart from the sections above.
ENVIRONMENTS_KEY = lanes.ENVIRONMENTS_KEY
TARGET_PROFILES_KEY = lanes.TARGET_PROFILES_KEY
POLICY_KINDS = ("rotation", "access", "compliance")
SEVERITIES = ("error", "warning", "info")
STANDARDS = ("soc2", "iso27001")
TEMPLATE_PREFIX = "templates."
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass
class ParsedDefinition:
    version: str | None = None
    merged_variables: dict[str, Any] = field(default_factory=dict)
    variables: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    providers: dict[str, ProviderSpec] = field(default_factory=dict)
    secrets: list[SecretDef] = field(default_factory=list)
    policies: dict[str, PolicySpec] = field(default_factory=dict)
    environments: Environments = field(default_factory=Environments)
    target_profiles: dict[str, TargetProfile] = field(default_factory=dict)


class DefinitionChecker(FieldChecks):
    """Walks a parsed document once, collecting errors and warnings that name the place."""

    def __init__(
        self, environ: Mapping[str, str], *, strict: bool, limits: InterpolationLimits | None = None,
        target_profile: str | None = None,
    ) -> None:
        """``target_profile``: the selected lane's ``target_profile``, merged into every target."""
        super().__init__(environ)
        self.target_profile_name = target_profile
        self.limits = limits
        self.strict = strict  # /config/validate: version and secrets required, rotation warnings
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
            if key not in TOP_LEVEL_KEYS and key not in (ENVIRONMENTS_KEY, TARGET_PROFILES_KEY):
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
        self._interpolator = interpolator = Interpolator(out.merged_variables, self.environ, self.limits)
        out.variables = interpolator.variables
        # Everything but `variables` (resolved above) and unknown keys is interpolated.
        sections = {k: interpolator.render(doc.get(k), k) for k in TOP_LEVEL_KEYS[2:]}
        self.errors.extend(interpolator.errors)
        out.environments = lanes.environments(self, doc.get(ENVIRONMENTS_KEY))
        out.target_profiles = lanes.target_profiles(self, doc.get(TARGET_PROFILES_KEY), out.environments)
        if self.target_profile_name is not None:
            self.target_profile = out.target_profiles.get(self.target_profile_name)
        self._set_unresolved(interpolator.unresolved)
        if consume and isinstance(doc, dict):
            self._consume = True
            doc.clear()  # the sections hold what is still needed
        out.metadata = self._metadata(sections["metadata"])
        out.providers = self._providers(sections["providers"])
        self.providers = out.providers
        self._provider_kinds = {alias: spec.kind for alias, spec in out.providers.items()}
        templates = self._templates(sections["templates"])
        out.secrets = self._secrets(sections["secrets"], templates)
        out.policies = self._policies(sections["policies"])
        # Undefined variables nothing here uses (unsupported kinds took theirs already).
        self._unresolved = {k: v for k, v in self._unresolved.items() if not k.startswith("providers.")}
        self.warnings.extend(f"{k}: {v} (left as written)" for k, v in self._unresolved.items())
        return out

    # -- sections --------------------------------------------------------------------------

    def _local(self, raw: Mapping[str, Any], targets: Sequence[TargetSpec], where: str) -> bool:
        """SecretZero's ``local`` flag, read as it reads it ("true", "yes", "on", "1", any truthy
        value); a local secret may only write local files and templates unless
        ``local_allow_cloud`` is set, else SecretZero refuses the definition."""
        local = _flag(raw.get("local"))
        if local and not _flag(raw.get("local_allow_cloud")):
            for target in targets:
                if (target.provider, target.kind) not in _LOCAL_TARGETS:
                    self.errors.append(
                        f"{where}: a local secret cannot target {target.provider}/{target.kind}: "
                        "use local/file or local/template targets, or set local_allow_cloud: true"
                    )
        return local

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
                # SecretZero records any name; this service checks these two only.
                self.warnings.append(
                    f"metadata.compliance[{index}]: standard "
                    f"{self._shown(item, f'metadata.compliance[{index}]')} is not checked by this service "
                    "(it checks soc2 and iso27001)"
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
            # Judged where a target of a supported kind uses this provider.
            self._provider_unresolved[alias] = self._take_unresolved(where)
        return providers

    def _templates(self, value: Any) -> dict[str, Template]:
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
                owner = f"template {self._shown(name, where)} field {self._shown(field_name, place)}"
                spec = self._generator(
                    generator.get("kind"), generator.get("config"), f"{place}.generator", owner
                )
                targets = self._targets(raw_field.get("targets"), f"{place}.targets", owner,
                                        default_key=str(field_name))
                if spec is not None:
                    parsed[field_name] = (spec, targets)
                    canonical[field_name] = {
                        "generator": canon_gen(spec),
                        "targets": canon_targets(targets),
                    }
            shared = self._targets(raw.get("targets"), f"{where}.targets", f"template {self._shown(name, where)}")
            templates[name] = Template(
                parsed, shared, {"fields": canonical, "targets": canon_targets(shared)}
            )
        return templates

    def _secrets(self, value: Any, templates: dict[str, Template]) -> list[SecretDef]:
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
        self, raw: Mapping[str, Any], where: str, templates: dict[str, Template], names: dict[str, str]
    ) -> SecretDef | None:
        self._unknown(raw, (*SECRET_KEYS, *LOCAL_KEYS, *KEPT_SECRET_KEYS), where)
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
        owner = f"secret {self._shown(name, f'{where}.name')}" if name else "this secret"  # in warnings
        config = self._shared(self._mapping(raw.get("config"), f"{where}.config"))
        template: Template | None = None
        generator: GeneratorSpec | None = None
        if kind is not None and kind.startswith(TEMPLATE_PREFIX):
            template = templates.get(kind[len(TEMPLATE_PREFIX) :])
            if template is None:
                shown = self._shown(kind[len(TEMPLATE_PREFIX) :], f"{where}.kind")
                self.errors.append(f"{where}.kind: unknown template {shown}")
        elif kind is not None:
            generator = self._generator(kind, raw.get("config"), where, owner, name.upper() if name else None, raw)
        period = raw.get("rotation_period")
        days = None if period is None else self._period(period, f"{where}.rotation_period")
        if period is None and self.strict:
            label = f"{where} {self._shown(name, f'{where}.name')}" if name else where
            self.warnings.append(f"{label}: no rotation_period defined")
        one_time = self._bool(raw, "one_time", False, where)
        description = raw.get("description")
        if description is not None and not isinstance(description, str):
            self.errors.append(f"{where}.description: must be a string")
        label = f"{where} {self._shown(name, f'{where}.name')}" if name else where
        # A template secret's own targets store each field under the field's name.
        default_key = name if kind is not None and not kind.startswith(TEMPLATE_PREFIX) else None
        targets = self._targets(raw.get("targets"), f"{where}.targets", owner, label, default_key)
        self.warnings.extend(f"{p} (left as written)" for p in self._take_unresolved(where))
        local = self._local(raw, targets, where)
        if name is None or kind is None or (template is None and generator is None):
            return None
        canonical: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "config": config,
            "rotation_period": period,
            "one_time": one_time,
            "targets": canon_targets(targets),
            **self._source_canon(generator, raw),
        }
        if template is not None:
            units = self._fields_from_env(name, template_units(name, template, targets))
            canonical["template"] = template.canonical
        else:
            assert generator is not None  # noqa: S101 - for the type checker: both None returned above
            placements = tuple(place(t, str(t.config.get("key") or name), shared=False) for t in targets)
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
            local=local,
        )

    def _policies(self, value: Any) -> dict[str, PolicySpec]:
        policies = {}
        for name, raw in self._mapping(value, "policies").items():
            where = f"policies.{name}"
            raw = self._mapping(raw, where)
            kind = raw.get("kind")
            if kind not in POLICY_KINDS:
                # SecretZero has more kinds (provider_identity, ...): kept, and reported by
                # the policy check as not checked here.
                what = "has no kind" if kind is None else f"kind {self._shown(kind, f'{where}.kind')}"
                self.warnings.append(
                    f"{where}: policy {what}: not checked by this service "
                    f"(it checks {', '.join(POLICY_KINDS)})"
                )
                enabled = self._bool(raw, "enabled", True, where)
                policies[name] = PolicySpec(name=name, kind=str(kind or ""), severity="warning",
                                            enabled=enabled, options={})
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
                self.warnings.append(
                    f"{where}.standard: {self._shown(standard, f'{where}.standard')} is not checked by "
                    "this service (it checks soc2 and iso27001)"
                )
            else:
                options["standard"] = lowered
        else:
            for key in ("allowed_targets", "denied_targets"):
                listed = options.get(key)
                if listed is not None and (
                    not isinstance(listed, list) or not all(isinstance(i, str) for i in listed)
                ):
                    self.errors.append(f"{where}.{key}: must be a list of target kinds")


def _flag(value: Any) -> bool:
    """SecretZero's coerce_local_flag."""
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1", "yes", "on"}
    return bool(value)
