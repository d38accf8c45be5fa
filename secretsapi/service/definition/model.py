"""The parsed definition: frozen dataclasses that every operation reads (slotted: a worker
keeps tens of thousands of them for a large definition).

A secret is made of one or more *units*: a plain secret is one unit named like the
secret; a template secret (``kind: templates.<t>``) has one unit per field, named
``<secret>.<field>``. Units are what the lockfile tracks and what targets store.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from secretsapi.service.definition.budget import RENDER_SECONDS
from secretsapi.service.definition.egress import Egress
from secretsapi.service.errors import EnvironmentNotFound, SecretNotDefined

# SecretZero's other names of a kind (its Vault provider's KV aliases): the kind is kept as
# written (target ids name it, as SecretZero's do) and the type resolves to ours.
KIND_ALIASES: Mapping[tuple[str, str], str] = {
    **{("vault", alias): "vault_kv" for alias in ("kv", "kv2", "kv-v2", "kvv2")},
    ("azure", "key_vault"): "azure_keyvault",
}


@dataclass(frozen=True, slots=True)
class TargetSpec:
    provider: str  # the alias as written: a key of ``providers:`` or a provider kind
    kind: str
    config: Mapping[str, Any]
    # The aliased provider's kind when it differs from the alias (``providers.<alias>.kind``).
    provider_kind: str | None = None
    # Another target of the same secret has the same SecretZero id (``targets.secretzero_ids``):
    # the kinds that record SecretZero's ids record their own, unique one for this target.
    shares_secretzero_id: bool = False

    @property
    def type(self) -> str:
        """``<provider kind>/<kind>``, e.g. ``local/file`` or ``aws/ssm_parameter`` for an alias;
        ``vault/vault_kv`` for SecretZero's ``kv``, ``kv2``, ``kv-v2`` and ``kvv2``, ``azure/azure_keyvault``
        for its ``key_vault``."""
        provider = self.provider_kind or self.provider
        return f"{provider}/{KIND_ALIASES.get((provider, self.kind), self.kind)}"


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """Where a secret's value is imported from instead of generated: SecretZero's ``source:``
    (``env``, ``file``, ``secret_ref``, ``provider_read``), or its environment override (a
    variable named after the secret in upper case: ``override``)."""

    kind: str
    config: Mapping[str, Any]
    # False: a source that cannot be read falls back to the generator (SecretZero's rule).
    required: bool = True
    # ``env``: the variable's value, taken when the definition was loaded (only the loader
    # holds the environment); None when unset or refused (``problem`` says which).
    env_value: str | None = field(default=None, repr=False)
    problem: str | None = None
    override: bool = False


@dataclass(frozen=True, slots=True)
class GeneratorSpec:
    kind: str
    config: Mapping[str, Any]
    # Why this secret cannot be generated here (a kind SecretZero has and this service does
    # not, a static value that is not set): the secret fails at sync, the definition stands.
    unavailable: str | None = None
    # Set: the value is imported from there, not generated (``state.sources``).
    source: SourceSpec | None = None


@dataclass(frozen=True, slots=True)
class Placement:
    """One unit written to one target under one key."""

    target: TargetSpec
    key: str
    # Not declared: a template output that renders the unit (``state.rendered``).
    rendered: bool = False


@dataclass(frozen=True, slots=True)
class Unit:
    """One generated value: the lockfile key, how to make it and where it goes."""

    lock_key: str
    generator: GeneratorSpec
    placements: tuple[Placement, ...]


@dataclass(frozen=True, slots=True)
class SecretDef:
    name: str
    kind: str
    config: Mapping[str, Any]
    rotation_period: str | None
    rotation_days: int | None
    one_time: bool
    targets: tuple[TargetSpec, ...]
    description: str | None
    units: tuple[Unit, ...]
    definition_hash: str
    # ``templates.<t>`` secrets: the template name; None for plain generator kinds.
    template: str | None = None
    # ``local: true``: state in the machine-local lockfile (SecretZero's .gitsecrets.local.lock).
    local: bool = False

    @property
    def target_types(self) -> list[str]:
        """Distinct target types over every unit, in order of first appearance."""
        seen: dict[str, None] = {}
        for unit in self.units:
            for placement in unit.placements:
                seen.setdefault(placement.target.type, None)
        return list(seen)


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    alias: str
    kind: str
    auth: Mapping[str, Any]
    config: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PolicySpec:
    name: str
    kind: str  # rotation | access | compliance; any other (SecretZero's) is kept and not checked
    severity: str  # error | warning | info
    enabled: bool
    options: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class EnvironmentProfile:
    """``environments.profiles.<name>``: SecretZero's lane (only what this service uses)."""

    var_files: tuple[str, ...] = ()
    lockfile: str | None = None  # relative to the definition's folder unless absolute
    target_profile: str | None = None  # a key of the top-level ``target_profiles``


@dataclass(frozen=True, slots=True)
class TargetProfile:
    """``target_profiles.<name>``: config merged into the targets of the lane that selects it,
    the provider alias's overrides first, then the target kind's (SecretZero's order)."""

    provider_overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    target_overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Environments:
    """The top-level ``environments`` block: the lane named by ``-e``/``environment``, else ``default``."""

    default: str | None = None
    profiles: Mapping[str, EnvironmentProfile] = field(default_factory=dict)
    # Whether the definition has the block at all: naming an environment without it is an error.
    declared: bool = False

    @property
    def selected(self) -> EnvironmentProfile | None:
        """The profile SecretZero uses when no environment is named: ``default``'s, if any."""
        return self.profiles.get(self.default) if self.default is not None else None

    def resolve(self, name: str | None) -> tuple[str | None, EnvironmentProfile | None]:
        """The lane in effect and its profile: ``name``, else ``default``. A named lane the
        block lacks (or a name without a block) is EnvironmentNotFound, naming the known ones,
        as SecretZero refuses it."""
        if name is None:
            return self.default, self.selected
        if not self.declared:
            raise EnvironmentNotFound(name, (), has_map=False)
        profile = self.profiles.get(name)
        if profile is None:
            raise EnvironmentNotFound(name, tuple(self.profiles))
        return name, profile


@dataclass(frozen=True, slots=True)
class Definition:
    path: Path
    version: str | None
    variables: Mapping[str, Any]
    metadata: Mapping[str, Any]
    providers: Mapping[str, ProviderSpec]
    secrets: tuple[SecretDef, ...]
    policies: Mapping[str, PolicySpec]
    text_hash: str
    variables_hash: str
    var_files: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    # Where local targets may write (SERVICE_TARGET_ROOTS); empty: the definition's folder.
    target_roots: tuple[Path, ...] = ()
    # The service's own files (data folder, database): never a file the definition names.
    service_paths: tuple[Path, ...] = ()
    # SERVICE_ALLOW_SCRIPTS: what the definition names may run commands (a kubeconfig's exec).
    allow_scripts: bool = False
    # How long one local/template render may take (SERVICE_RENDER_TIMEOUT).
    render_seconds: float = RENDER_SECONDS
    # The operator's rule for the server's credentials and identities, for this workspace's operations.
    egress: Egress = field(default_factory=Egress)
    environments: Environments = field(default_factory=Environments)
    # The process environment's values the definition took (``${NAME}`` not naming a variable),
    # each with its expression: messages about targets show the expression (environment_hidden).
    environment_values: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    _by_name: Mapping[str, SecretDef] = field(default_factory=dict, repr=False, compare=False)

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def environment_hidden(self, text: str) -> str:
        """``text`` with each environment value the definition took replaced by its expression
        (``${HOME}``), in one pass: a path built from the environment is named, not shown."""
        if not self.environment_values or not text:
            return text
        pattern = _alternation(tuple(self.environment_values))
        return pattern.sub(lambda found: self.environment_values[found.group(0)], text)

    def secret(self, name: str) -> SecretDef:
        by_name = self._by_name or {s.name: s for s in self.secrets}
        try:
            return by_name[name]
        except KeyError:
            raise SecretNotDefined(name, by_name) from None

    def select(self, name: str | None) -> tuple[SecretDef, ...]:
        """All secrets, or just the named one (raising SecretNotDefined)."""
        return self.secrets if name is None else (self.secret(name),)


@functools.lru_cache(maxsize=32)
def _alternation(values: tuple[str, ...]) -> re.Pattern[str]:
    # Longest first, so a value inside a longer one never splits it.
    return re.compile("|".join(re.escape(v) for v in sorted(values, key=len, reverse=True)))


def _fast_pickling(*classes: type) -> None:
    """Pickle these slotted frozen classes by field names computed once: dataclasses' own
    ``__setstate__`` calls ``fields()`` for every object, ~80% of unpickling a definition of
    20,000 secrets (the shared parse cache). The state is the same list of field values."""
    for cls in classes:
        names = tuple(f.name for f in fields(cls))

        def getstate(self: Any, names: tuple[str, ...] = names) -> list[Any]:
            return [getattr(self, name) for name in names]

        def setstate(self: Any, state: list[Any], names: tuple[str, ...] = names,
                     assign: Any = object.__setattr__) -> None:
            for name, value in zip(names, state, strict=True):
                assign(self, name, value)

        setattr(cls, "__getstate__", getstate)  # noqa: B010 - replaces the dataclass's own
        setattr(cls, "__setstate__", setstate)  # noqa: B010


_fast_pickling(TargetSpec, SourceSpec, GeneratorSpec, Placement, Unit, SecretDef, ProviderSpec, PolicySpec,
               EnvironmentProfile, TargetProfile, Environments, Definition)
