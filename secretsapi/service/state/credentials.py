"""A credential rotation inside a write (``state.value_store`` issues, ``state.write`` records)
and the scheduled retirement of previous slots (``retire_due``, run before each rotation)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from secretsapi.service.credentials.lifecycle import (
    STATE_KEY,
    Issued,
    issue,
    retire,
    state_of,
    verify_value,
)
from secretsapi.service.credentials.spec import CredentialSpec, credential_spec, is_credential
from secretsapi.service.definition.model import Definition, SecretDef, Unit
from secretsapi.service.errors import GeneratorError, LockEntryCorrupted, TargetError
from secretsapi.service.state.lockfile import LockDocument, parse_time
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.base import check_value_source
from secretsapi.service.util.hashing import sha256_text

logger = logging.getLogger(__name__)


def spec_of(unit: Unit) -> CredentialSpec:
    errors: list[str] = []
    spec = credential_spec(unit.generator.kind, unit.generator.config, "generator", errors)
    if spec is None:
        raise GeneratorError("; ".join(errors))
    return spec


def issue_for(secret: SecretDef, unit: Unit, definition: Definition, doc: LockDocument | None,
              now: datetime, ctx: TargetContext, *, cut_grace: bool = False) -> Issued:
    """The unit's new credential, issued and verified at its source (``lifecycle.issue``), or
    the one an interrupted run left in its targets."""
    try:
        entry = doc.entry(unit.lock_key) if doc is not None else None
    except LockEntryCorrupted:
        entry = None
    state = state_of(entry.extra if entry is not None else None)
    held = _held(unit, ctx)
    recorded = [value for value in held if entry is not None and sha256_text(value) == entry.hash]
    unrecorded = [value for value in held if value not in recorded]
    try:
        return issue(spec_of(unit), secret.name, state, definition.egress.connections, now, unrecorded, recorded,
                     cut_grace=cut_grace)
    except GeneratorError as exc:
        logger.warning("credential %s: %s", secret.name, exc.message)
        raise


def _held(unit: Unit, ctx: TargetContext) -> list[str]:
    """The values ``unit``'s targets hold (those that can be read)."""
    found = []
    for placement in unit.placements:
        try:
            kind = get_kind(placement.target.type)
            check_value_source(kind, placement.target, ctx)
            value = kind.read([placement], ctx)[placement.key].value
        except TargetError:
            continue
        if value is not None:
            found.append(value)
    return found


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


@dataclass(frozen=True)
class Verdict:
    """Whether the credential one target holds logs in at its source now."""

    secret: str
    lock_key: str
    target_id: str
    location: str
    recorded: bool  # the target holds the value the lockfile recorded
    works: bool
    problem: str | None = None  # the source could not be asked (unreachable): ``works`` says nothing


def verdicts(definition: Definition, doc: LockDocument, secrets: Sequence[SecretDef],
             ctx: TargetContext) -> list[Verdict]:
    """Log in with what each target of each source-credential secret holds (each distinct value
    once). A target that cannot be read or holds nothing is drift's other findings' business."""
    found: list[Verdict] = []
    connections = definition.egress.connections
    for secret in secrets:
        for unit in secret.units:
            if not is_credential(unit.generator.kind):
                continue
            try:
                entry = doc.entry(unit.lock_key)
                spec = spec_of(unit)
            except (LockEntryCorrupted, GeneratorError):
                continue
            if entry is None:
                continue
            tried: dict[str, bool] = {}
            problems: dict[str, str] = {}
            for placement in unit.placements:
                try:
                    kind = get_kind(placement.target.type)
                    check_value_source(kind, placement.target, ctx)
                    value = kind.read([placement], ctx)[placement.key].value
                    target_id, location = kind.target_id(placement.target, ctx), kind.location(placement.target, ctx)
                except TargetError:
                    continue
                if value is None:
                    continue
                digest = sha256_text(value)
                if digest not in tried:
                    try:
                        works = verify_value(spec, value, connections)
                    except GeneratorError as exc:
                        problems[digest] = exc.message
                        works = False
                    if works is None:
                        break  # the connection is not configured: nothing can be checked
                    tried[digest] = works
                found.append(Verdict(secret.name, unit.lock_key, target_id, location, digest == entry.hash,
                                     tried[digest], problems.get(digest)))
    return found


def dead(definition: Definition, doc: LockDocument, secrets: Sequence[SecretDef], ctx: TargetContext) -> list[str]:
    """Secrets whose targets hold no credential that logs in (a repair rotates them)."""
    by_secret: dict[str, bool] = {}
    for verdict in verdicts(definition, doc, secrets, ctx):
        # A source that cannot be asked is no reason to rotate: only refused logins count.
        by_secret[verdict.secret] = by_secret.get(verdict.secret, False) or verdict.works or bool(verdict.problem)
    return [name for name, works in by_secret.items() if not works]
