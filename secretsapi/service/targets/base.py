"""The target-kind contract: what sync and drift need from any place a secret is stored."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from secretsapi.service.definition.budget import RENDER_SECONDS
from secretsapi.service.definition.model import Definition, Placement, ProviderSpec, TargetSpec


@dataclass(frozen=True)
class TargetContext:
    base_dir: Path  # the definition file's folder
    providers: Mapping[str, ProviderSpec]
    # Current value of any unit by lock key (local/template needs all of them); may be
    # expensive (it can generate), so kinds call it lazily. During a sync it must return
    # the values being written in that run.
    value_of: Callable[[str], str | None]
    lock_keys: tuple[str, ...]  # every unit's lock key in the definition
    # Where local targets may write (SERVICE_TARGET_ROOTS); empty: ``base_dir`` alone.
    target_roots: tuple[Path, ...] = ()
    # The service's own files (data folder, database): refused wherever the definition names one.
    service_paths: tuple[Path, ...] = ()
    # SERVICE_ALLOW_SCRIPTS: a kubeconfig the definition names may run commands (exec).
    allow_scripts: bool = False
    # How long one local/template render may take (SERVICE_RENDER_TIMEOUT).
    render_seconds: float = RENDER_SECONDS

    @classmethod
    def of(cls, definition: Definition, value_of: Callable[[str], str | None] | None = None) -> TargetContext:
        """The context of ``definition``'s targets. Only writes need ``value_of`` (templates
        render other units' values); without it every unit's value is unknown."""
        lock_keys = tuple(unit.lock_key for secret in definition.secrets for unit in secret.units)
        return cls(definition.base_dir, definition.providers, value_of or _unknown, lock_keys,
                   definition.target_roots, definition.service_paths, definition.allow_scripts,
                   definition.render_seconds)


def _unknown(lock_key: str) -> str | None:
    return None


@dataclass(frozen=True)
class ReadBack:
    present: bool  # False: file, key or remote entry absent
    hash: str | None  # sha256 of what is stored (value for files, whole output for templates)
    location: str  # path or name, for drift details
    # The stored value, for kinds that hold values (None for templates). Callers use it only
    # to re-write or render a secret they did not regenerate, never to report it.
    value: str | None = field(default=None, repr=False)
    # A dotenv line standard readers misparse but SecretZero's own reading (outer double quotes
    # stripped, nothing unescaped) gives this: the recorded value, misencoded (drift: "misencoded").
    misencoded_value: str | None = field(default=None, repr=False)
    # False: the store never gives the value back (GitHub secrets, Jenkins credentials), so
    # ``hash`` is None and drift compares ``updated_at``, the store's last write (None when the
    # store keeps none), with the lockfile's time for the target (see ``write_only``).
    verifiable: bool = True
    updated_at: datetime | None = None


def option(type_: str, default: Any, description: str) -> dict[str, Any]:
    """One config key of ``TargetKind.describe``."""
    return {"type": type_, "default": default, "description": description}


@runtime_checkable
class TargetKind(Protocol):
    type: str  # "<provider>/<kind>", e.g. "local/file"

    def describe(self) -> dict[str, Any]:
        """``{"description", "config": {key: {"type", "default", "description"}}}``."""
        ...

    def validate(self, target: TargetSpec, where: str) -> list[str]:
        """Configuration errors, each naming ``where``; empty when valid. Validation reports them
        as errors; a write refuses such a target. A kind may also have ``advise(target, where)``:
        validation's warnings, for what SecretZero accepts there (a warning ending "this target
        fails at sync" marks what the write still refuses)."""
        ...

    def target_id(self, target: TargetSpec, ctx: TargetContext) -> str:
        """``<provider>/<kind>/<identifier>``, the key in the lockfile's ``targets``."""
        ...

    def location(self, target: TargetSpec, ctx: TargetContext) -> str: ...

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        """Placements with equal groups are written and read in one call (e.g. one file)."""
        ...

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        """Store one group; ``{placement.key: recorded hash}``. TargetError never holds values."""
        ...

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        """Read one group back, keyed by placement.key; TargetError if the store is unreadable."""
        ...
