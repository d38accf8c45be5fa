"""A credential rotation inside a write (``state.value_store`` issues, ``state.write`` records)
and the scheduled retirement of previous slots (``retire_due``, run before each rotation)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from secretsapi.service.credentials.lifecycle import STATE_KEY, Issued, PhaseFailed, issue, retire, state_of
from secretsapi.service.credentials.spec import CredentialSpec, credential_spec, is_credential
from secretsapi.service.definition.model import Definition, SecretDef, Unit
from secretsapi.service.errors import GeneratorError, LockEntryCorrupted
from secretsapi.service.state.lockfile import LockDocument, parse_time

logger = logging.getLogger(__name__)


def spec_of(unit: Unit) -> CredentialSpec:
    errors: list[str] = []
    spec = credential_spec(unit.generator.kind, unit.generator.config, "generator", errors)
    if spec is None:
        raise GeneratorError("; ".join(errors))
    return spec


def issue_for(secret: SecretDef, unit: Unit, definition: Definition, doc: LockDocument | None,
              now: datetime) -> Issued:
    """The unit's new credential, issued and verified at its source (``lifecycle.issue``)."""
    try:
        entry = doc.entry(unit.lock_key) if doc is not None else None
    except LockEntryCorrupted:
        entry = None
    state = state_of(entry.extra if entry is not None else None)
    try:
        return issue(spec_of(unit), secret.name, state, definition.egress.connections, now)
    except PhaseFailed as exc:
        logger.warning("credential %s: %s", secret.name, exc.message)
        raise


def record_credentials(doc: LockDocument, states: Mapping[str, dict[str, Any]], written: set[str]) -> None:
    """Mark each issued credential current in its entry: only units every target took (``written``)."""
    for key, state in states.items():
        if key not in written:
            continue
        entry = doc.entry(key)
        if entry is not None:
            doc.set_entry(key, replace(entry, extra={**entry.extra, STATE_KEY: state}))


def due_retirements(doc: LockDocument, definition: Definition, now: datetime) -> list[tuple[SecretDef, Unit]]:
    found = []
    for secret in definition.secrets:
        for unit in secret.units:
            if not is_credential(unit.generator.kind):
                continue
            try:
                entry = doc.entry(unit.lock_key)
            except LockEntryCorrupted:
                continue
            state = state_of(entry.extra if entry is not None else None)
            until = state.get("retire_after")
            if state.get("previous") and isinstance(until, str) and _passed(until, now):
                found.append((secret, unit))
    return found


def retire_units(doc: LockDocument, definition: Definition, units: list[tuple[SecretDef, Unit]],
                 now: datetime) -> list[tuple[str, str]]:
    """Retire the previous slot of each unit whose grace is over, updating ``doc``; the errors
    (secret name, message)."""
    errors = []
    for secret, unit in units:
        entry = doc.entry(unit.lock_key)
        if entry is None:
            continue
        try:
            done = retire(spec_of(unit), secret.name, state_of(entry.extra), definition.egress.connections, now)
        except GeneratorError as exc:
            errors.append((secret.name, exc.message))
            continue
        if done is not None:
            doc.set_entry(unit.lock_key, replace(entry, extra={**entry.extra, STATE_KEY: done}))
    return errors


def _passed(until: str, now: datetime) -> bool:
    try:
        return parse_time(until) <= now
    except ValueError:
        return True  # an unreadable time: retire (the slot is not current either way)
