"""Target and provider kinds by name, so a new kind plugs in without touching sync, drift or this file.

A module of this package that declares ``KINDS`` (instances of its target kinds) and, for a new
provider kind, ``PROVIDERS`` (their ``schema.ProviderSchema``) is found at the first lookup:
adding a kind is adding its module (and its entry in the conformance table, tests/targets/kinds.py).
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetKind
from secretsapi.service.targets.schema import ProviderSchema

_KINDS: dict[str, TargetKind] = {}
_PROVIDERS: dict[str, ProviderSchema] = {}
_builtins_registered = False
_builtins_lock = threading.Lock()


def _kinds() -> dict[str, TargetKind]:
    """The registered kinds, the built-in ones imported on first use: they load the file formats
    and the template engine, which a command that neither parses nor writes never needs (a
    status read from the shared parse cache)."""
    global _builtins_registered
    if not _builtins_registered:
        with _builtins_lock:
            if not _builtins_registered:
                _register_builtins()
                _builtins_registered = True
    return _KINDS


def register(kind: TargetKind) -> TargetKind:
    """Register ``kind`` under ``kind.type``, replacing any earlier one (tests swap in fakes)."""
    _kinds()[kind.type] = kind
    return kind


def get_kind(type: str) -> TargetKind:
    registered = _kinds()
    try:
        return registered[type]
    except KeyError:
        known = ", ".join(sorted(registered)) or "none"
        raise TargetError(f"unknown target type '{type}' (known: {known})") from None


def kinds() -> list[TargetKind]:
    registered = _kinds()
    return [registered[name] for name in sorted(registered)]


def provider_kinds() -> list[ProviderSchema]:
    """Every provider kind's declaration, by name."""
    _kinds()
    return [_PROVIDERS[name] for name in sorted(_PROVIDERS)]


def provider_kind(name: str) -> ProviderSchema | None:
    _kinds()
    return _PROVIDERS.get(name)


def _register_builtins() -> None:
    # The kind modules are found, not listed: each module of this package declaring KINDS or
    # PROVIDERS. The remote kinds import their SDKs only when used, so the engine runs without them.
    package = importlib.import_module(__package__ or "secretsapi.service.targets")
    for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        for provider in getattr(module, "PROVIDERS", ()):
            _PROVIDERS[provider.kind] = provider
        # Straight into the table: register() would ask for the built-in kinds again.
        for kind in getattr(module, "KINDS", ()):
            _KINDS[kind.type] = kind
