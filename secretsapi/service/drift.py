"""Drift: compare what the lockfile recorded with what every target holds now."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from secretsapi.service.definition.model import Definition, Placement, SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted, TargetError
from secretsapi.service.generators.tokens import ACTIVE, issued_record, issuer_of
from secretsapi.service.generators.tokens import state as token_state
from secretsapi.service.results import DriftItem, DriftResult
from secretsapi.service.state import credentials
from secretsapi.service.state.lock_state import read_state
from secretsapi.service.state.lockfile import LockDocument, LockEntry, format_time
from secretsapi.service.state.rendered import (
    CHANGED,
    STALE,
    UNTRACKED,
    Member,
    classify,
    is_template,
    member,
    renders,
    with_rendered,
)
from secretsapi.service.state.write import ENTRIES_HASH
from secretsapi.service.state.write_only import changed_after, recorded_at
from secretsapi.service.targets import ReadBack, TargetContext, TargetKind, get_kind
from secretsapi.service.targets.fanout import read_groups
from secretsapi.service.targets.secretzero_ids import aliases, recorded_hash
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.util.progress import Progress
from secretsapi.service.workspace import Workspace

MESSAGES = {
    "not_generated": "secret is defined but has not been generated",
    "corrupted_entry": "lockfile entry is corrupted",
    "untracked_target": "target is in the definition but not recorded in the lockfile",
    "target_missing": "secret is missing from its expected target",
    "value_changed": "value in target storage differs from the lockfile",
    "misencoded": "target holds the recorded value, written so that standard dotenv readers misparse it",
    "target_unreadable": "target cannot be read",
    "unknown_target_kind": "target kind is not supported",
    "definition_changed": "secret definition changed since it was last synced",
    "stale_output": "template output was not rendered with the secret's current value",
    "unverifiable": "target is write-only: its value cannot be read back, only when the store last wrote it",
    "token_revoked": "the token the targets hold was revoked at its source",
    "token_expired": "the token the targets hold has expired at its source",
    "token_missing": "the token the targets hold no longer exists at its source",
    "token_unchecked": "the token's state at its source cannot be read",
    "credential_rejected": "the source does not accept the credential this target holds",
    "credential_unverifiable": "the credential this target holds could not be checked at its source",
}


@dataclass(frozen=True)
class _Check:
    secret: str
    lock_key: str
    placement: Placement
    kind: TargetKind
    target_id: str
    expected: str | None  # None only for a template output (``state.rendered`` decides)
    unit_hash: str  # the entry's hash: the value's
    entry: LockEntry


def detect_drift(ws: Workspace, *, secret_name: str | None = None, progress: Progress | None = None) -> DriftResult:
    """``progress`` counts the secrets compared with the lockfile; the last one counts once the
    targets are read back."""
    definition = with_rendered(ws.definition())
    doc = read_state(ws.lockfiles, definition)
    ctx = TargetContext.of(definition)
    items: list[DriftItem] = []
    checks: list[_Check] = []
    file_changed = _secretfile_hash(doc) != definition.text_hash
    selected = definition.select(secret_name)
    for done, secret in enumerate(selected):
        if progress is not None:
            progress(done, len(selected))
        items.extend(_entry_findings(doc, secret, ctx, checks, file_changed, ws))
    items.extend(_read_back(checks, ctx))
    items.extend(_credential_findings(definition, doc, selected, ctx))
    if progress is not None:
        progress(len(selected), len(selected))
    order = {s.name: i for i, s in enumerate(definition.secrets)}
    items.sort(key=lambda item: order.get(item.secret, 0))
    drifted = list(dict.fromkeys(item.secret for item in items if _counts(item)))
    if definition.environment_values:
        items = [_shown(item, definition.environment_hidden) for item in items]
    return DriftResult(bool(drifted), drifted, items)


def _credential_findings(definition: Definition, doc: LockDocument, secrets: tuple[SecretDef, ...],
                         ctx: TargetContext) -> list[DriftItem]:
    """A source credential a target holds that no longer logs in: ``changed_at_source`` when it
    is the recorded one (someone changed the password behind the service's back)."""
    found = []
    for v in credentials.verdicts(definition, doc, secrets, ctx):
        if v.problem is not None:
            found.append(_item(v.secret, "credential_unverifiable", v.target_id, v.location, key=v.lock_key,
                               problem=v.problem))
        elif not v.works:
            found.append(_item(v.secret, "credential_rejected", v.target_id, v.location, key=v.lock_key,
                               changed_at_source=v.recorded))
    return found


def _counts(item: DriftItem) -> bool:
    """An unverifiable target is drift only when the store was written after the lockfile's time;
    otherwise the finding just says it could not be checked."""
    return item.details["reason"] != "unverifiable" or item.details["changed_after_record"] is True


def _shown(item: DriftItem, hide: Callable[[str], str]) -> DriftItem:
    """A finding's target, path and message name an environment-built path by its expression."""
    details = {k: hide(v) if k in ("target", "path") and isinstance(v, str) else v for k, v in item.details.items()}
    return DriftItem(item.secret, hide(item.message), details)


def _entry_findings(
    doc: LockDocument, secret: SecretDef, ctx: TargetContext, checks: list[_Check], file_changed: bool,
    ws: Workspace,
) -> list[DriftItem]:
    found: list[DriftItem] = []
    for unit in secret.units:
        try:
            entry = doc.entry(unit.lock_key)
        except LockEntryCorrupted as exc:
            found += _per_target(secret.name, unit, ctx, "corrupted_entry",
                                 lockfile=str(ws.local_lockfile_path if secret.local else ws.lockfile_path),
                                 problem=exc.reason)
            continue
        if entry is None:
            found += _per_target(secret.name, unit, ctx, "not_generated")
            continue
        if file_changed and entry.definition_hash and entry.definition_hash != secret.definition_hash:
            found += _per_target(secret.name, unit, ctx, "definition_changed", definition=str(ws.definition_path))
        for placement in unit.placements:
            found.extend(_plan_read(secret.name, unit.lock_key, placement, entry, ctx, checks))
        found.extend(_token_findings(secret.name, unit, entry, ctx, ws))
    return found


def _token_findings(secret: str, unit: Unit, entry: LockEntry, ctx: TargetContext, ws: Workspace) -> list[DriftItem]:
    """A token created at its source (``generators.tokens``) that no longer works there: the
    targets hold a dead credential, which their hashes cannot show."""
    record = issued_record(entry.extra)
    issuer = issuer_of(unit.generator.kind)
    if record is None or issuer is None or record.get("kind") != unit.generator.kind:
        return []
    facts = {"key": unit.lock_key, "token_id": record.get("id"), "expires_at": record.get("expires_at")}
    try:
        state = token_state(record, ctx, ws.now())
    except TargetError as exc:
        return [_item(secret, "token_unchecked", None, str(record.get("owner")), **facts, problem=exc.message)]
    if state == ACTIVE:
        return []
    return [_item(secret, f"token_{state}", None, str(record.get("owner")), **facts)]


def _per_target(secret: str, unit: Unit, ctx: TargetContext, reason: str, **extra: Any) -> list[DriftItem]:
    """"Per secret and target": every target of the unit gets its own finding."""
    found = []
    for placement in unit.placements or (None,):
        tid, where = _describe(placement, ctx)
        found.append(_item(secret, reason, tid, where, key=unit.lock_key, **extra))
    return found


def _plan_read(
    secret: str, lock_key: str, placement: Placement, entry: LockEntry, ctx: TargetContext, checks: list[_Check]
) -> list[DriftItem]:
    try:
        kind = get_kind(placement.target.type)
    except TargetError:
        return [_item(secret, "unknown_target_kind", placement.target.type, placement.target.type)]
    tid = kind.target_id(placement.target, ctx)
    expected = recorded_hash(entry.targets, tid, placement.target, ctx)
    if expected is None and not is_template(placement):
        return [_item(secret, "untracked_target", tid, kind.location(placement.target, ctx), key=placement.key)]
    checks.append(_Check(secret, lock_key, placement, kind, tid, expected, entry.hash, entry))
    return []


def _read_back(checks: list[_Check], ctx: TargetContext) -> list[DriftItem]:
    """Read every target group once, whatever the number of secrets stored in it; groups are
    read concurrently (``fanout``)."""
    groups: dict[tuple[str, Hashable], list[_Check]] = defaultdict(list)
    for check in checks:
        groups[(check.kind.type, check.kind.group(check.placement.target, ctx))].append(check)
    found: list[DriftItem] = []
    batch = list(groups.values())
    reads = read_groups([(m[0].kind, [c.placement for c in m]) for m in batch], ctx)
    for members, backs in zip(batch, reads, strict=True):
        kind = members[0].kind
        if not isinstance(backs, TargetError) and is_template(members[0].placement):
            found.extend(_template_findings(members, backs, ctx))
            continue
        if isinstance(backs, TargetError):
            for c in members:
                found.append(_item(c.secret, "target_unreadable", c.target_id,
                                   kind.location(c.placement.target, ctx), key=c.placement.key, problem=backs.message))
            continue
        for c in members:
            back = backs[c.placement.key]
            where = back.location
            if not back.present:
                found.append(_item(c.secret, "target_missing", c.target_id, where, key=c.placement.key))
            elif not back.verifiable:
                found.append(_unverifiable(c, back, ctx))
            elif back.hash != c.expected and _secretzero_template(back, c):
                continue
            elif back.hash != c.expected and c.expected is not None and _misencoded(back, c.expected):
                found.append(_item(c.secret, "misencoded", c.target_id, where, key=c.placement.key))
            elif back.hash != c.expected:
                found.append(_item(c.secret, "value_changed", c.target_id, where, key=c.placement.key,
                                   expected_hash=c.expected, actual_hash=back.hash))
    return found


def _template_findings(members: list[_Check], backs: dict[str, ReadBack], ctx: TargetContext) -> list[DriftItem]:
    """One template output's findings, under each unit placed in it (``state.rendered.classify``).
    A template that cannot be read or parsed cannot say whether its output is current: unreadable."""
    kind, target = members[0].kind, members[0].placement.target
    where = kind.location(target, ctx)
    try:
        renders(target, ctx)
    except TargetError as exc:
        return [_item(c.secret, "target_unreadable", c.target_id, where, key=c.placement.key, problem=exc.message)
                for c in members]
    back = backs[members[0].placement.key]
    if not back.present or back.hash is None:
        return [_item(c.secret, "target_missing", c.target_id, where, key=c.placement.key) for c in members]
    found: list[DriftItem] = []
    placed = [_member(c, ctx) for c in members]
    for c, m, state in zip(members, placed, classify(back.hash, placed), strict=True):
        if state == STALE:
            found.append(_item(c.secret, "stale_output", c.target_id, where, key=c.placement.key))
        elif state == UNTRACKED:
            found.append(_item(c.secret, "untracked_target", c.target_id, where, key=c.placement.key))
        elif state == CHANGED:
            found.append(_item(c.secret, "value_changed", c.target_id, where, key=c.placement.key,
                               expected_hash=m.expected, actual_hash=back.hash))
    return found


def _member(check: _Check, ctx: TargetContext) -> Member:
    return member(check.placement, check.entry, (check.target_id, *aliases(check.placement.target, ctx)), ctx)


def _unverifiable(check: _Check, back: ReadBack, ctx: TargetContext) -> DriftItem:
    recorded = recorded_at(check.entry, (check.target_id, *aliases(check.placement.target, ctx)))
    return _item(check.secret, "unverifiable", check.target_id, back.location, key=check.placement.key,
                 store_updated_at=format_time(back.updated_at) if back.updated_at else None,
                 recorded_at=format_time(recorded), changed_after_record=changed_after(back, recorded))


def _secretzero_template(back: ReadBack, check: _Check) -> bool:
    """SecretZero records an ExternalSecret manifest target under the value's hash, not the
    manifest's: a kind that holds no value can then only be checked for presence (templates:
    ``state.rendered.classify``)."""
    return (back.value is None and check.expected == check.unit_hash
            and check.kind.type == "kubernetes/external_secret")


def _misencoded(back: ReadBack, expected: str) -> bool:
    """SecretZero's own reading of the entry gives the recorded value (its unescaped quoting)."""
    return back.misencoded_value is not None and sha256_text(back.misencoded_value) == expected


def _describe(placement: Placement | None, ctx: TargetContext) -> tuple[str | None, str | None]:
    if placement is None:
        return None, None
    try:
        kind = get_kind(placement.target.type)
    except TargetError:
        return placement.target.type, placement.target.type
    return kind.target_id(placement.target, ctx), kind.location(placement.target, ctx)


def _item(secret: str, reason: str, target: str | None, where: str | None, **extra: Any) -> DriftItem:
    return DriftItem(secret, MESSAGES[reason], {"reason": reason, "target": target, "path": where, **extra})


def _secretfile_hash(doc: LockDocument) -> str | None:
    """The definition file hash the entries were last all written from (see record_definition)."""
    block = doc.secretfile
    if block is None:
        return None
    recorded = block.get(ENTRIES_HASH, block.get("hash"))
    return recorded if isinstance(recorded, str) else None


