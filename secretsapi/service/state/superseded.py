"""After a write's commit: revoke the tokens its new ones replaced (``generators.tokens``).

A token created at its source replaces the one the targets held; the write records the old one
under the entry's superseded tokens and commits. Only then, with every target holding the new
token, is the old one revoked, so no consumer is left with a dead token. With
``revoke_existing`` (SecretZero's default) the other active tokens of the same name at the same
project or group go too, as SecretZero revokes them. A token created for a secret whose targets
all failed is revoked at once (nothing holds it). A revoke that fails stays recorded, is
reported (the operation's errors, so its audit row), and is tried again by the next sync or
rotation of the secret.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from secretsapi.service.definition.model import Definition, SecretDef
from secretsapi.service.errors import LockEntryCorrupted, TargetError
from secretsapi.service.generators.tokens import (
    ACTIVE,
    SUPERSEDED,
    describe,
    issued_record,
    issuer_of,
    records_to_revoke,
    revoke,
    same_name,
    state,
)
from secretsapi.service.results import OperationError
from secretsapi.service.state.lock_state import read_state, write_state
from secretsapi.service.state.lockfile import LockDocument
from secretsapi.service.state.outcome import StoreOutcome
from secretsapi.service.state.write import Place, write_lock
from secretsapi.service.targets import TargetContext


def token_secrets(secrets: Iterable[SecretDef]) -> list[SecretDef]:
    return [s for s in secrets if any(issuer_of(u.generator.kind) is not None for u in s.units)]


def revoke_superseded(place: Place, definition: Definition, secrets: Sequence[SecretDef],
                      outcome: StoreOutcome | None) -> list[OperationError]:
    """Revoke what the selected secrets' entries list as superseded (and, for the tokens
    ``outcome`` just stored, the other tokens of their name); the errors of those that failed."""
    selected = token_secrets(secrets)
    if not selected:
        return []
    ctx = TargetContext.of(definition)
    errors: list[OperationError] = []
    fresh = {item.lock_key for item in outcome.written if item.issued is not None} if outcome else set()
    for name, record in outcome.unused_tokens if outcome else []:
        try:
            revoke(record, ctx)
        except TargetError as exc:
            errors.append(OperationError(name, None, f"the token {describe(record)} no target took could not be "
                                         f"revoked: {exc.message}; it expires by itself"))
    with write_lock(place):
        doc = read_state(place.lockfiles, definition, exact=True)
        changed = False
        for secret in selected:
            for unit in secret.units:
                try:
                    entry = doc.entry(unit.lock_key)
                except LockEntryCorrupted:
                    continue
                if entry is None:
                    continue
                pending = records_to_revoke(entry.extra)
                current = issued_record(entry.extra)
                if unit.lock_key in fresh and current is not None and current.get("revoke_existing", True):
                    pending += _same_name(current, ctx, pending, secret.name, errors)
                if not pending:
                    continue
                left = _revoke_all(pending, ctx, secret.name, errors)
                if left != records_to_revoke(entry.extra):
                    doc.set_entry(unit.lock_key, replace(entry, extra={**entry.extra, SUPERSEDED: left}))
                    changed = True
        if changed:
            write_state(place.lockfiles, doc)
    return errors


def _same_name(current: dict[str, Any], ctx: TargetContext, pending: list[dict[str, Any]], secret: str,
               errors: list[OperationError]) -> list[dict[str, Any]]:
    try:
        found = same_name(current, ctx)
    except TargetError as exc:
        errors.append(OperationError(secret, None, f"the other tokens named like {describe(current)} could not be "
                                     f"listed: {exc.message}"))
        return []
    known = {str(item.get("id")) for item in pending}
    return [item for item in found if str(item.get("id")) not in known]


def _revoke_all(pending: list[dict[str, Any]], ctx: TargetContext, secret: str,
                errors: list[OperationError]) -> list[dict[str, Any]]:
    left = []
    for record in pending:
        try:
            revoke(record, ctx)
        except TargetError as exc:
            left.append(record)
            errors.append(OperationError(secret, None, f"the previous token {describe(record)} could not be "
                                         f"revoked: {exc.message}; the next sync or rotation tries again"))
    return left




def dead_tokens(doc: LockDocument, secrets: Sequence[SecretDef], ctx: TargetContext, now: datetime) -> list[SecretDef]:
    """The secrets whose recorded token is revoked, expired or gone at its source (a repair
    creates a new one); a token whose state cannot be read is left to drift to report."""
    dead = []
    for secret in token_secrets(secrets):
        for unit in secret.units:
            issuer = issuer_of(unit.generator.kind)
            try:
                entry = doc.entry(unit.lock_key)
            except LockEntryCorrupted:
                continue
            record = issued_record(entry.extra) if entry is not None else None
            if issuer is None or record is None or record.get("kind") != unit.generator.kind:
                continue
            try:
                found = state(record, ctx, now)
            except TargetError:
                continue
            if found != ACTIVE:
                dead.append(secret)
                break
    return dead
