"""Field checks: one value at its place (types, periods, targets, generators), problems recorded."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from secretsapi.service.credentials.spec import credential_spec, is_credential
from secretsapi.service.definition.interpolation import Interpolator
from secretsapi.service.definition.model import (
    KIND_ALIASES,
    GeneratorSpec,
    ProviderSpec,
    TargetProfile,
    TargetSpec,
    Unit,
)
from secretsapi.service.definition.periods import parse_period
from secretsapi.service.definition.var_files import deep_merge
from secretsapi.service.generators import (
    CHARSETS,
    GENERATORS,
    SECRETZERO_ONLY_GENERATORS,
    STATIC_KINDS,
    STATIC_MISMATCH,
    static_value,
    validate_generator,
)
from secretsapi.service.generators.tokens import issuer_of
from secretsapi.service.loading.sources import importable, source_canon, sourced, with_override
from secretsapi.service.targets.ids import mark_shared
from secretsapi.service.targets.registry import kinds

TARGET_KEYS = ("provider", "kind", "config")
STATIC_UNSET = "static value is not set"
# SecretZero's test for a static value still to be asked for: exactly one ``${...}``.
_PLACEHOLDER = re.compile(r"^\$\{[^}]+\}$")


_ROOT = re.compile(r"[^.\[]+(?:\[\d+\]|\.[^.\[]*)?")


def _root(place: str) -> str:
    """A place's section entry: ``secrets[3]`` of ``secrets[3].targets[0].config.path``."""
    match = _ROOT.match(place)
    return match.group(0) if match else place


_PER_FIELD = "<SECRET>_<FIELD>"  # a template field's, named once a secret uses the template


def _unset_message(value_key: str, reason: str | None, env_name: str) -> str:
    if reason:
        return f"{STATIC_UNSET} ({reason}): define it, or set the environment variable {env_name}"
    return f"{STATIC_UNSET}: set config.{value_key} or the environment variable {env_name}"


def supported_types() -> frozenset[str]:
    """The target types this service writes."""
    return frozenset(kind.type for kind in kinds())


# (errors, warnings) of one target of a supported type, given the label naming its place
# (``secrets[2] 'db' targets[1] local/file``), its place and the key it stores under when its
# config names none (None: several, a template's shared targets): set by validation only, so
# loading a definition for an operation stays as lenient as before (its bad targets fail alone
# at sync).
TargetRules = Callable[[TargetSpec, str, str, str | None], tuple[list[str], list[str]]]


class FieldChecks:
    """The checks of single values that DefinitionChecker builds on.

    Each check appends its problems to ``errors`` and ``warnings``, naming the place it is given,
    and returns what it could make of the value.
    """

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self._interpolator = Interpolator({}, environ)
        self.providers: dict[str, ProviderSpec] = {}  # the declared ones, once parsed
        self._provider_kinds: dict[str, str] = {}  # alias -> kind, for targets naming an alias
        self._configs: dict[tuple[Any, ...], dict[str, Any]] = {}
        # The selected lane's target profile (``target_profiles.<name>``), merged into each target.
        self.target_profile: TargetProfile | None = None
        self.environ = environ
        self.strict = False
        # Places using an undefined variable (left as written), taken by the check of the
        # place that decides whether it matters; what is left over becomes warnings.
        self._set_unresolved({})
        self._provider_unresolved: dict[str, list[str]] = {}  # alias -> its problems
        self._supported = supported_types()
        self.target_rules: TargetRules | None = None

    def _set_unresolved(self, unresolved: Mapping[str, str]) -> None:
        self._unresolved = dict(unresolved)
        # By section entry (``secrets[3]``, ``providers.vault``): each check looks at its own
        # entry's few places, not at every place of a large definition.
        self._unresolved_by_root: dict[str, list[str]] = {}
        for key in unresolved:
            self._unresolved_by_root.setdefault(_root(key), []).append(key)

    def _take_unresolved(self, prefix: str) -> list[str]:
        if not self._unresolved:
            return []
        candidates = self._unresolved_by_root.get(_root(prefix), ())
        found = [k for k in candidates if k in self._unresolved
                 and (k == prefix or k.startswith((f"{prefix}.", f"{prefix}[")))]
        return [f"{k}: {self._unresolved.pop(k)}" for k in found]

    def _report_unresolved(self, problems: list[str]) -> None:
        """Where this service uses the value: an error of the definition it loads, a warning
        at validation (the operations that use it fail until the variable is defined)."""
        if self.strict:
            self.warnings.extend(f"{p} (left as written: operations that use it fail)" for p in problems)
        else:
            self.errors.extend(problems)

    def _check_plain(self, value: Any, where: str) -> None:
        check_plain(value, where, self.errors)

    def _profiled(self, provider: str | None, kind: str | None, config: dict[str, Any]) -> dict[str, Any]:
        """``config`` with the target profile's overrides for the provider alias, then for the
        target kind, deep-merged as SecretZero's apply_target_profile does."""
        profile = self.target_profile
        if profile is None:
            return config
        for override in (profile.provider_overrides.get(provider or ""), profile.target_overrides.get(kind or "")):
            if override:
                config = deep_merge(config, override)
        return config

    def _shared(self, config: dict[str, Any]) -> dict[str, Any]:
        """One dict for every equal config of scalars: thousands of secrets share a handful of
        target files and generator options. Keyed with the values' types (1 and true differ)."""
        key = tuple((k, type(v), v) for k, v in config.items())
        try:
            return self._configs.setdefault(key, config)
        except TypeError:  # a nested list or mapping: kept as it is
            return config

    def interpolated_at(self, where: str) -> bool:
        """The value at ``where`` came out of a substitution (messages must not echo it)."""
        return where in self._interpolator.interpolated

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

    def _targets(self, value: Any, where: str, owner: str = "this secret", label: str | None = None,
                 default_key: str | None = None) -> tuple[TargetSpec, ...]:
        """``label`` names the owner in per-target messages (``secrets[2] 'db'``); by default
        ``where`` without its ``.targets``. ``default_key``: see TargetRules."""
        if value is None:
            return ()
        if not isinstance(value, list):
            self.errors.append(f"{where}: must be a list")
            return ()
        label = label or where.removesuffix(".targets")
        targets = []
        for index, raw in enumerate(value):
            place = f"{where}[{index}]"
            if not isinstance(raw, Mapping):
                self.errors.append(f"{place}: must be a mapping")
                continue
            self._unknown(raw, TARGET_KEYS, place)
            provider = self._required_str(raw, "provider", place)
            kind = self._required_str(raw, "kind", place)
            config = self._shared(self._profiled(provider, kind, self._mapping(raw.get("config"), f"{place}.config")))
            unresolved = self._take_unresolved(place)
            if provider and kind:
                aliased = self._provider_kinds.get(provider, provider)
                target = TargetSpec(provider=provider, kind=kind, config=config,
                                    provider_kind=aliased if aliased != provider else None)
                named = f"{label} targets[{index}] {provider}/{kind}"
                if target.type in self._supported:
                    self._report_unresolved(unresolved)
                    # A provider setting stays as written (as in SecretZero): the store refuses
                    # it when a target uses it, an error for those targets only.
                    self.warnings.extend(
                        f"{p} (left as written: the targets using provider '{provider}' fail until it is defined)"
                        for p in self._provider_unresolved.pop(provider, [])
                    )
                    if self.target_rules is not None:
                        errors, warnings = self.target_rules(target, named, place, default_key)
                        self.errors.extend(errors)
                        self.warnings.extend(warnings)
                elif self.strict and self._undeclared(provider, kind):
                    # A kind this service writes under a provider no one declared: SecretZero
                    # and this service both fail it at sync ("provider not initialized").
                    self.errors.append(
                        f"{named}: provider {self._shown(provider, f'{place}.provider')} is not declared "
                        f"in providers and is not a provider kind ({', '.join(self._provider_names())})"
                    )
                else:
                    # Written by SecretZero, not here: a warning, and that target fails at sync.
                    self.warnings.append(
                        f"{place}: target kind '{kind}' is not supported by this service: "
                        f"{owner} will not be written there"
                    )
                targets.append(target)
        return mark_shared(targets)

    def _provider_names(self) -> list[str]:
        return sorted({t.partition("/")[0] for t in self._supported})

    def _undeclared(self, provider: str, kind: str) -> bool:
        """``provider`` is neither a declared alias nor a provider kind, and ``kind`` is one this
        service writes under some provider (other kinds keep the unsupported-kind warning)."""
        if provider in self._provider_kinds or provider in self._provider_names():
            return False
        ours = {t.partition("/")[2] for t in self._supported} | {alias for _, alias in KIND_ALIASES}
        return kind in ours

    def _generator(
        self, kind: Any, config: Any, where: str, owner: str = "this secret", env_name: str | None = None,
        secret: Mapping[str, Any] | None = None,
    ) -> GeneratorSpec | None:
        """``env_name``: where a static value that is not set is taken from (SecretZero's
        non-interactive mode reads the secret's name in upper case). With the ``secret`` it
        generates for, its ``source:`` or the environment override (``loading.sources``)."""
        made = self._plain_generator(kind, config, where, owner, env_name)
        if secret is None or env_name is None:
            return made
        return sourced(made, secret, where, env_name, self.environ, self.errors, self.warnings)

    def _source_canon(self, generator: GeneratorSpec | None, secret: Mapping[str, Any]) -> dict[str, Any]:
        return source_canon(generator, secret)

    def _plain_generator(
        self, kind: Any, config: Any, where: str, owner: str, env_name: str | None
    ) -> GeneratorSpec | None:
        if not isinstance(kind, str) or not kind:
            self.errors.append(f"{where}.kind: required")
            return None
        mapping = self._shared(self._mapping(config, f"{where}.config"))
        unresolved = self._take_unresolved(f"{where}.config")
        if is_credential(kind):  # changed at its source (``credentials``)
            self._report_unresolved(unresolved)
            problems: list[str] = []
            credential_spec(kind, mapping, where, problems)
            self.errors.extend(problems)
            return None if problems else GeneratorSpec(kind=kind, config=mapping)
        if kind not in GENERATORS:
            # SecretZero accepts any kind at validation and fails the secret when it runs.
            known = "is not supported by this service" if kind in SECRETZERO_ONLY_GENERATORS else (
                f"is unknown (this service has {', '.join(GENERATORS)})"
            )
            message = f"generator kind {self._shown(kind, f'{where}.kind')} {known}"
            self.warnings.append(f"{where}.kind: {message}: {owner} will fail at sync")
            return GeneratorSpec(kind=kind, config=mapping, unavailable=message)
        if kind in STATIC_KINDS:
            return self._static(kind, mapping, where, owner, env_name, unresolved)
        if kind != "script":  # a script's ``${...}`` is left to the shell it runs, as in SecretZero
            self._report_unresolved(unresolved)
        if kind == "random_string":
            charset = mapping.get("charset")
            if isinstance(charset, str) and charset not in CHARSETS:
                self.warnings.append(
                    f"{where}.config.charset: {self._shown(charset, f'{where}.config.charset')} is not "
                    f"a charset name ({', '.join(CHARSETS)}): alphanumeric is used, as SecretZero does"
                )
        spec = GeneratorSpec(kind=kind, config=mapping)
        problems = validate_generator(spec, where, interpolated=self._interpolator.interpolated)
        if kind in GENERATORS and isinstance(config, Mapping):
            for key in config:
                if key not in GENERATORS[kind]["options"]:
                    self.warnings.append(f"{where}.config: unknown option '{key}' for {kind} (ignored)")
        if problems and issuer_of(kind) is not None:  # SecretZero checks them when it creates the token, not before
            self.warnings.extend(f"{problem}: {owner} will fail at sync" for problem in problems)
            return GeneratorSpec(kind=kind, config=mapping, unavailable="; ".join(problems))
        self.errors.extend(problems)
        return None if problems else spec

    def _static(
        self, kind: str, config: dict[str, Any], where: str, owner: str, env_name: str | None, unresolved: list[str]
    ) -> GeneratorSpec | None:
        value_key = "default" if "default" in config else "value"
        value = static_value(config)
        in_value = [p for p in unresolved if p.startswith(f"{where}.config.{value_key}")]
        missing = value is None or bool(in_value) or (isinstance(value, str) and _PLACEHOLDER.match(value) is not None)
        self._report_unresolved([p for p in unresolved if p not in in_value])
        if not missing:
            spec = GeneratorSpec(kind=kind, config=config)
            problems = validate_generator(spec, where, interpolated=self._interpolator.interpolated)
            mismatch = f"{where}.config.value: {STATIC_MISMATCH}"
            if problems == [mismatch]:
                # SecretZero checks the pattern when it generates: that secret fails, not the file.
                self.warnings.append(f"{mismatch}: {owner} will fail at sync")
                return GeneratorSpec(kind=kind, config=config, unavailable=f"static value {STATIC_MISMATCH}")
            self.errors.extend(problems)
            return None if problems else spec
        from_env = importable(self.environ, env_name) if env_name else None
        if from_env:
            # The value is in the spec only, not in the config the definition hash covers.
            return GeneratorSpec(kind=kind, config={**config, value_key: from_env})
        # "<place>: undefined variable 'X'" -> "config.default: undefined variable 'X'"
        reason = in_value[0][len(where) + 1 :] if in_value else None
        message = _unset_message(value_key, reason, env_name or _PER_FIELD)
        self.warnings.append(f"{where}.config.{value_key}: {message}: {owner} will fail at sync")
        return GeneratorSpec(kind=kind, config=config, unavailable=message)

    def _fields_from_env(self, name: str, units: tuple[Unit, ...]) -> tuple[Unit, ...]:
        """A template field's value is taken from ``<SECRET>_<FIELD>`` (upper case) when that is
        set, whatever its generator, as SecretZero's non-interactive mode does (a static that is
        not set fails without it); the definition hash is unchanged."""
        out = []
        for unit in units:
            spec = unit.generator
            env_name = f"{name}_{unit.lock_key[len(name) + 1:]}".upper()
            if spec.kind in STATIC_KINDS and spec.unavailable is not None and spec.unavailable.startswith(STATIC_UNSET):
                value_key = "default" if "default" in spec.config else "value"
                from_env = importable(self.environ, env_name)
                spec = GeneratorSpec(spec.kind, {**spec.config, value_key: from_env}) if from_env else replace(
                    spec, unavailable=spec.unavailable.replace(_PER_FIELD, env_name)
                )
            spec = with_override(spec, env_name, self.environ, self.warnings, f"secret '{name}' field")
            out.append(replace(unit, generator=spec))
        return tuple(out)


def check_plain(value: Any, where: str, errors: list[str]) -> None:
    """JSON-like values only: string keys, no sets or binary, so hashing is well defined (and
    every answer can show them). Iterative: a deeply nested document costs no stack."""
    # (value, place) to check, or (None, message) for an error found in a mapping's keys, kept
    # in document order: a mapping's problems come before its later siblings'.
    stack: list[tuple[Any, str, bool]] = [(value, where, False)]
    while stack:
        item, place, is_error = stack.pop()
        if is_error:
            errors.append(place)
            continue
        found: list[tuple[Any, str, bool]] = []
        if isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, str):
                    found.append((None, f"{place}: keys must be strings", True))
                    break
                # Strings, the usual leaf, are passed over before a place is named for them.
                if type(child) is not str:
                    found.append((child, f"{place}.{key}", False))
        elif isinstance(item, list):
            found = [(child, f"{place}[{index}]", False) for index, child in enumerate(item) if type(child) is not str]
        elif item is not None and not isinstance(item, str | int | float):
            errors.append(f"{place}: unsupported value of type {type(item).__name__}")
        stack.extend(reversed(found))
