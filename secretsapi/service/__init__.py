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

from secretsapi.service.agent_sync import agent_sync
from secretsapi.service.catalogue import (
    declared_providers,
    generator_catalogue,
    provider_catalogue,
    secret_types,
    target_catalogue,
)
from secretsapi.service.definition.budget import InterpolationLimits
from secretsapi.service.drift import detect_drift
from secretsapi.service.policy import check_policies
from secretsapi.service.recorded_values import without_recorded_values
from secretsapi.service.render import render_definition
from secretsapi.service.rotation import check_rotation, execute_rotation
from secretsapi.service.state.locks import ExtraLock
from secretsapi.service.status import list_secrets, secret_status, secret_statuses
from secretsapi.service.sync import sync
from secretsapi.service.validate import validate_document, validate_file, validate_workspace
from secretsapi.service.value_read import read_value
from secretsapi.service.workspace import Workspace

__all__ = [
    "ExtraLock",
    "InterpolationLimits",
    "Workspace",
    "agent_sync",
    "check_policies",
    "check_rotation",
    "declared_providers",
    "detect_drift",
    "execute_rotation",
    "generator_catalogue",
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
    "without_recorded_values",
]
