"""The target-kind contract: what sync and drift need from any place a secret is stored, and the
base every built-in kind derives from (its declaration, its optional parts, its failures)."""

from __future__ import annotations

import functools
import logging
import traceback
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from secretsapi.service.definition.budget import RENDER_SECONDS
from secretsapi.service.definition.egress import Egress
from secretsapi.service.definition.model import Definition, Placement, ProviderSpec, TargetSpec
from secretsapi.service.errors import ServiceError, TargetError
from secretsapi.service.targets.schema import KindSchema, provider_settings

logger = logging.getLogger(__name__)


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
    # The operator's rule for the server's own credentials (``definition.egress``): the operation's,
    # from its workspace through its definition; never shared with another operation.
    egress: Egress = field(default_factory=Egress)

    @classmethod
    def of(cls, definition: Definition, value_of: Callable[[str], str | None] | None = None) -> TargetContext:
        """The context of ``definition``'s targets. Only writes need ``value_of`` (templates
        render other units' values); without it every unit's value is unknown."""
        lock_keys = tuple(unit.lock_key for secret in definition.secrets for unit in secret.units)
        return cls(definition.base_dir, definition.providers, value_of or _unknown, lock_keys,
                   definition.target_roots, definition.service_paths, definition.allow_scripts,
                   definition.render_seconds, definition.egress)


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


@runtime_checkable
class TargetKind(Protocol):
    @property
    def type(self) -> str:
        """``<provider>/<kind>``, e.g. ``local/file``."""
        ...

    @property
    def schema(self) -> KindSchema:
        """Its declaration: config keys, what a write needs, its id (``targets.schema``)."""
        ...

    @property
    def batch(self) -> int:
        """Groups read per call by ``read_many`` (1: one group a call)."""
        ...

    @property
    def records_write_time(self) -> bool:
        """The store never gives a value back and keeps when it was written (GitHub): the
        lockfile keeps each write's time for drift to compare (``state.write_only``)."""
        ...

    def describe(self) -> dict[str, Any]:
        """``{"description", "config": {key: {"type", "default", "description"}}}``."""
        ...

    def validate(self, target: TargetSpec, where: str,
                 providers: Mapping[str, ProviderSpec] | None = None) -> list[str]:
        """Configuration errors, each naming ``where``; empty when valid. Validation reports them
        as errors; a write refuses such a target. ``providers`` None: needs a provider may meet
        are not judged."""
        ...

    def advise(self, target: TargetSpec, where: str) -> list[str]:
        """Validation's warnings, for what SecretZero accepts there (a warning ending "this target
        fails at sync" marks what the write still refuses)."""
        ...

    def target_id(self, target: TargetSpec, ctx: TargetContext) -> str:
        """``<provider>/<kind>/<identifier>``, the key in the lockfile's ``targets``."""
        ...

    def own_id(self, target: TargetSpec, ctx: TargetContext) -> str | None:
        """Another id a lockfile may record the target under (an earlier version's), or None."""
        ...

    def location(self, target: TargetSpec, ctx: TargetContext) -> str: ...

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        """Placements with equal groups are written and read in one call (e.g. one file)."""
        ...

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        """Whether reaching the target takes a credential the definition does not supply (the
        server's environment, ~/.vault-token, an SDK's default chain): ``egress`` then rules."""
        ...

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        """Store one group; ``{placement.key: recorded hash}``. TargetError never holds values."""
        ...

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        """Read one group back, keyed by placement.key; TargetError if the store is unreadable."""
        ...

    def read_many(self, groups: Sequence[Sequence[Placement]],
                  ctx: TargetContext) -> list[dict[str, ReadBack] | TargetError]:
        """``read`` of up to ``batch`` groups of one provider, each result or its TargetError."""
        ...


class Kind:
    """The base of the built-in kinds: a kind declares ``schema`` and implements ``target_id``,
    ``location``, ``group``, ``write`` and ``read``; the rest derives from the declaration or has
    a default a kind overrides (``check`` adds the rules a declaration cannot say).

    Whatever a kind's ``write``, ``read`` or ``read_many`` raises besides a ServiceError is that
    call's TargetError, naming the exception's class only (its text can quote a value or a
    response): a store's bad answer fails its targets, never the operation around them.
    """

    schema: ClassVar[KindSchema]
    type: ClassVar[str]
    batch: ClassVar[int] = 1
    records_write_time: ClassVar[bool] = False
    # Its server credential reaches the operator's store (a remote kind), not a file of the
    # definition's own folder (an encrypted file): writes there follow SERVICE_PROVIDER_WRITE.
    operators_store: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "schema" in cls.__dict__:
            cls.type = cls.schema.type
        for name in ("write", "read", "read_many"):
            if name in cls.__dict__:
                setattr(cls, name, _contained(cls.__dict__[name]))

    def describe(self) -> dict[str, Any]:
        return self.schema.describe()

    def validate(self, target: TargetSpec, where: str,
                 providers: Mapping[str, ProviderSpec] | None = None) -> list[str]:
        provider = None if providers is None else provider_settings(providers.get(target.provider))
        return self.schema.problems(target.config, where, target.provider, provider) + self.check(target, where)

    def check(self, target: TargetSpec, where: str) -> list[str]:
        """The kind's own rules beyond its declaration."""
        return []

    def advise(self, target: TargetSpec, where: str) -> list[str]:
        return []

    def own_id(self, target: TargetSpec, ctx: TargetContext) -> str | None:
        return None

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        return False

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        raise NotImplementedError

    def read_many(self, groups: Sequence[Sequence[Placement]],
                  ctx: TargetContext) -> list[dict[str, ReadBack] | TargetError]:
        results: list[dict[str, ReadBack] | TargetError] = []
        for items in groups:
            try:
                results.append(self.read(items, ctx))
            except TargetError as exc:
                results.append(exc)
        return results


def _contained(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: Kind, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except ServiceError:
            raise
        except Exception as exc:
            # Logged without the exception's text (it can quote a value): its class and where it came from.
            logger.error("target kind %s failed unexpectedly (%s):\n%s", self.type, type(exc).__name__,
                         "".join(traceback.format_tb(exc.__traceback__)).rstrip())
            raise TargetError(f"{self.type}: the store's answer could not be used ({type(exc).__name__})") from None

    return call


def check_value_source(kind: TargetKind, target: TargetSpec, ctx: TargetContext) -> None:
    """TargetError unless a value read from ``target`` may leave its store: copied to another
    target, rendered, imported, shown or used as a source. Read with the server's own credentials
    it may only come from a location the operator lists (SERVICE_PROVIDER_READ): a definition
    naming another team's path would otherwise copy that team's secret out of the operator's store
    (a confused deputy). Comparing a read with the lockfile's hash needs no such listing."""
    if kind.uses_server_credentials(target, ctx):
        ctx.egress.check_read(kind.type, kind.location(target, ctx))


def check_value_destination(kind: TargetKind, target: TargetSpec, ctx: TargetContext) -> None:
    """TargetError unless a value may be written to ``target``: with the server's own credentials
    only under a location the operator lists once SERVICE_PROVIDER_WRITE is set (unset: anywhere
    the addresses allow, SecretZero's behaviour), so a definition cannot overwrite another team's
    secret in the operator's store."""
    if (ctx.egress.write_prefixes is not None and getattr(kind, "operators_store", True)
            and kind.uses_server_credentials(target, ctx)):
        ctx.egress.check_write(kind.type, kind.location(target, ctx))
