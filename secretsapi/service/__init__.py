"""Framework-free secrets engine: definitions, generators, lockfile, targets and operations.

The operations are importable from here (``from secretsapi.service import sync``); the
sub-packages hold what they are built from, each importing only those before it:
``definition`` (what the file declares: the model), ``generators`` (values) and ``targets``
(where values go), ``loading`` (a file checked into the model), ``state`` (the lockfile, its
locks, and ``state.write``, the one write path), and ``workspace`` (the settings, a value);
``util`` (hashing, atomic files, a memo). Errors live in ``errors``, results in ``results``.
Nothing in this package may import Django; a guard test enforces it.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from secretsapi.service.agent_sync import agent_sync
    from secretsapi.service.catalogue import (
        declared_providers,
        generator_catalogue,
        provider_catalogue,
        secret_types,
        target_catalogue,
    )
    from secretsapi.service.definition.budget import InterpolationLimits
    from secretsapi.service.definition.egress import Egress, egress_of
    from secretsapi.service.drift import detect_drift
    from secretsapi.service.policy import check_policies
    from secretsapi.service.recorded_values import without_recorded_values
    from secretsapi.service.render import render_definition
    from secretsapi.service.rotation import check_rotation, execute_rotation
    from secretsapi.service.state.locks import ExtraLock
    from secretsapi.service.status import index_lockfiles, list_secrets, secret_status, secret_statuses
    from secretsapi.service.sync import clean_lockfile, import_values, sync
    from secretsapi.service.validate import (
        validate_document,
        validate_file,
        validate_workspace,
        with_connections_checked,
    )
    from secretsapi.service.value_read import read_value
    from secretsapi.service.workspace import Workspace

# Each name's module, imported when the name is first used (PEP 562): a command that reads a
# status never imports the write path, the targets' clients or the renderer (~0.15 s a start).
_EXPORTS = {
    "ExtraLock": "state.locks",
    "InterpolationLimits": "definition.budget",
    "Workspace": "workspace",
    "agent_sync": "agent_sync",
    "check_policies": "policy",
    "check_rotation": "rotation",
    "clean_lockfile": "sync",
    "Egress": "definition.egress",
    "egress_of": "definition.egress",
    "declared_providers": "catalogue",
    "detect_drift": "drift",
    "execute_rotation": "rotation",
    "generator_catalogue": "catalogue",
    "import_values": "sync",
    "index_lockfiles": "status",
    "list_secrets": "status",
    "provider_catalogue": "catalogue",
    "read_value": "value_read",
    "render_definition": "render",
    "secret_status": "status",
    "secret_statuses": "status",
    "secret_types": "catalogue",
    "sync": "sync",
    "target_catalogue": "catalogue",
    "validate_document": "validate",
    "validate_file": "validate",
    "validate_workspace": "validate",
    "with_connections_checked": "validate",
    "without_recorded_values": "recorded_values",
}
__all__ = [
    "Egress",
    "ExtraLock",
    "InterpolationLimits",
    "Workspace",
    "agent_sync",
    "check_policies",
    "check_rotation",
    "clean_lockfile",
    "declared_providers",
    "detect_drift",
    "egress_of",
    "execute_rotation",
    "generator_catalogue",
    "import_values",
    "index_lockfiles",
    "list_secrets",
    "provider_catalogue",
    "read_value",
    "render_definition",
    "secret_status",
    "secret_statuses",
    "secret_types",
    "sync",
    "target_catalogue",
    "validate_document",
    "validate_file",
    "validate_workspace",
    "with_connections_checked",
    "without_recorded_values",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


class _Operations(types.ModuleType):
    """This package, where an operation keeps its name when the module of the same name is
    imported (``sync``, ``agent_sync``): the import system sets a package's attribute to each
    submodule it loads, which would otherwise replace the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Operations
