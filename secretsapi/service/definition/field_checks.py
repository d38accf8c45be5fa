"""Field checks: one value at its place (types, periods, targets, generators), problems recorded."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from secretsapi.service.definition.interpolation import Interpolator
from secretsapi.service.definition.model import GeneratorSpec, TargetSpec
from secretsapi.service.definition.periods import parse_period
from secretsapi.service.generators import GENERATORS, validate_generator

TARGET_KEYS = ("provider", "kind", "config")


class FieldChecks:
    """The checks of single values that DefinitionChecker builds on.

    Each check appends its problems to ``errors`` and ``warnings``, naming the place it is given,
    and returns what it could make of the value.
    """

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self._interpolator = Interpolator({}, environ)
        self._provider_kinds: dict[str, str] = {}  # alias -> kind, for targets naming an alias
        self._configs: dict[tuple[Any, ...], dict[str, Any]] = {}

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
