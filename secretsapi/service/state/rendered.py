"""Template outputs and the units they render: placed in each, recorded under each, current for each.

A ``local/template`` output renders any unit of the definition, not only those that list it as a
target (``app.conf``, a target of ``redis_password``, renders ``postgres_password`` too). The
operations that write or check state (sync, rotation, import, drift) see the definition through
``with_rendered``: each unit a template renders (``template.rendered_keys``) gets a placement in
its output, marked ``rendered``, unless it declares one there. The output is then written with
every change of any of its units (the write's companions), recorded in each of their entries,
checked and repaired under each: the machinery of any target, with no second path.

Where an output is recorded: under ``targets`` for the units that declare it, as any target;
under ``rendered_outputs`` (``{<id>: {"hash", "rendered_at"}}``) for the others, since SecretZero
takes a ``targets`` id its definition does not give the secret for a stale entry, warns and prunes
it on every sync. SecretZero ignores ``rendered_outputs`` and drops it when it rewrites the file;
the output's render time (``classify``) then still says whether it is current.

Whether an output is current for one unit (``classify``): its entry records the output's hash,
and the value did not change after that record (the record's time is not older than the entry's
``updated_at``: a tool that changes the value without rendering the output, and keeps the keys it
does not know, leaves the old record behind); or, not recorded for it, the output was last
rendered after its value last changed (a render uses every unit's current value).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from secretsapi.service.definition.model import Definition, Placement, SecretDef, TargetSpec, Unit
from secretsapi.service.errors import LockEntryCorrupted, TargetError
from secretsapi.service.state.lockfile import LockDocument, LockEntry, format_time, parse_time
from secretsapi.service.state.write_only import PROVENANCE
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.secretzero_ids import recorded_hash
from secretsapi.service.targets.template import LocalTemplateKind
from secretsapi.service.util.last_result import LastResult

TEMPLATE = "local/template"

# A unit's state in one template output (``classify``).
CURRENT = "current"  # the output was rendered with the unit's current value
STALE = "stale"  # the output is ours (a unit records it) but not rendered with this unit's value
CHANGED = "changed"  # no unit records what the output holds: someone else wrote it
UNTRACKED = "untracked"  # declared, and nothing recorded for it: as any target not recorded
UNRECORDED = "unrecorded"  # rendered with the unit's current value, not recorded for it (SecretZero dropped it)


@dataclass(frozen=True)
class _Output:
    """One template output of the definition: its first declared target and who declares it."""

    target: TargetSpec
    declared: frozenset[str]  # lock keys that list it as a target


_outputs: LastResult[Definition, dict[Hashable, _Output]] = LastResult()


def with_rendered(definition: Definition) -> Definition:
    """``definition`` with a ``rendered`` placement in each template output for every unit it
    renders and does not declare there (the same object when there are none).

    Each output's template is read and parsed once. One that cannot be read or parsed adds no
    placement: writing it fails, and drift reports it, until it can. A template that can render
    any unit (it iterates ``secrets``) is placed in every unit: linear in the units, as is the rest.
    """
    outputs = _outputs.get(definition, _find_outputs)
    if not outputs:
        return definition
    ctx = TargetContext.of(definition)
    extra: dict[str, list[Placement]] = {}
    for output in outputs.values():
        try:
            keys = renders(output.target, ctx)
        except TargetError:
            continue
        for lock_key in ctx.lock_keys if keys is None else sorted(keys):
            if lock_key not in output.declared:
                extra.setdefault(lock_key, []).append(Placement(output.target, lock_key, rendered=True))
    if not extra:
        return definition
    secrets = tuple(_placed(secret, extra, ctx) for secret in definition.secrets)
    return replace(definition, secrets=secrets, _by_name={secret.name: secret for secret in secrets})


def renders(target: TargetSpec, ctx: TargetContext) -> frozenset[str] | None:
    """The lock keys the template of ``target`` renders (None: any); TargetError when it cannot be
    read or parsed (``LocalTemplateKind.renders``)."""
    kind = get_kind(TEMPLATE)
    if not isinstance(kind, LocalTemplateKind):
        raise TargetError(f"{TEMPLATE} is not a template kind")
    return kind.renders(target, ctx)


def _find_outputs(definition: Definition) -> dict[Hashable, _Output]:
    ctx = TargetContext.of(definition)
    found: dict[Hashable, tuple[TargetSpec, set[str]]] = {}
    for secret in definition.secrets:
        for unit in secret.units:
            for placement in unit.placements:
                if placement.target.type != TEMPLATE:
                    continue
                kind = get_kind(TEMPLATE)
                key = kind.group(placement.target, ctx)
                found.setdefault(key, (placement.target, set()))[1].add(unit.lock_key)
    return {key: _Output(target, frozenset(declared)) for key, (target, declared) in found.items()}


def _placed(secret: SecretDef, extra: Mapping[str, list[Placement]], ctx: TargetContext) -> SecretDef:
    if not any(unit.lock_key in extra for unit in secret.units):
        return secret
    units = []
    for unit in secret.units:
        added = extra.get(unit.lock_key)
        if not added:
            units.append(unit)
            continue
        taken = {_target_id(p.target, ctx) for p in unit.placements}
        placements = list(unit.placements)
        for placement in added:
            # Two templates that name no id share SecretZero's ``local/template/``: where the unit
            # has that id already, this output is named by its path (``local/template/<output_path>``).
            if _target_id(placement.target, ctx) in taken:
                named = {**placement.target.config, "name": str(placement.target.config.get("output_path"))}
                placement = replace(placement, target=replace(placement.target, config=named))
            taken.add(_target_id(placement.target, ctx))
            placements.append(placement)
        units.append(Unit(unit.lock_key, unit.generator, tuple(placements)))
    return replace(secret, units=tuple(units))


def _target_id(target: TargetSpec, ctx: TargetContext) -> str | None:
    try:
        return get_kind(target.type).target_id(target, ctx)
    except TargetError:
        return None  # an unsupported kind: the write reports it


@dataclass(frozen=True)
class Member:
    """One unit placed in a template output, as its lockfile entry records it."""

    placement: Placement
    entry: LockEntry
    expected: str | None  # the hash the entry records for the output, or None
    recorded_at: datetime | None  # when the entry says the output was last written for it


RENDERED = "rendered_outputs"


def member(placement: Placement, entry: LockEntry, target_ids: Sequence[str], ctx: TargetContext) -> Member:
    """``placement``'s record in ``entry``: under ``targets`` (any of ``target_ids``, the output's
    id then its aliases) with its ``target_provenance`` when declared, else under ``rendered_outputs``."""
    if placement.rendered:
        record = _rendered_records(entry.extra).get(target_ids[0], {})
        expected, stamp = record.get("hash"), record.get("rendered_at")
        return Member(placement, entry, expected if isinstance(expected, str) else None,
                      _time(stamp) if isinstance(stamp, str) else None)
    expected = recorded_hash(entry.targets, target_ids[0], placement.target, ctx)
    return Member(placement, entry, expected, _provenance_time(entry, target_ids))


def move_rendered(doc: LockDocument, definition: Definition) -> None:
    """Move what a write recorded under ``targets`` for rendered placements (and its provenance)
    to ``rendered_outputs``: the writes record every placement alike. Records of outputs that no
    longer render a unit are dropped. One look at each raw entry: linear in the units."""
    ctx = TargetContext.of(definition)
    kind = get_kind(TEMPLATE)
    raw_entries = doc.raw_entries()
    for secret in definition.secrets:
        for unit in secret.units:
            ids = [kind.target_id(p.target, ctx) for p in unit.placements if p.rendered]
            raw = raw_entries.get(unit.lock_key)
            if not isinstance(raw, dict) or not (ids or RENDERED in raw):
                continue
            try:
                entry = doc.entry(unit.lock_key)
            except LockEntryCorrupted:
                continue
            if entry is None:
                continue
            moved = _moved(entry, ids)
            if moved != entry:
                doc.set_entry(unit.lock_key, moved)


def _moved(entry: LockEntry, ids: Sequence[str]) -> LockEntry:
    provenance = entry.extra.get(PROVENANCE)
    provenance = dict(provenance) if isinstance(provenance, Mapping) else {}
    records = {key: value for key, value in _rendered_records(entry.extra).items() if key in ids}
    for target_id in ids:
        if target_id in entry.targets:
            written = _provenance_time(entry, (target_id,))
            records[target_id] = {"hash": entry.targets[target_id],
                                  "rendered_at": format_time(written) if written else entry.updated_at}
        provenance.pop(target_id, None)
    if records == _rendered_records(entry.extra) and not any(target_id in entry.targets for target_id in ids):
        return entry
    targets = {key: value for key, value in entry.targets.items() if key not in ids}
    # Kept when empty: the stored entry's keys survive a write that leaves them out.
    return replace(entry, targets=targets, extra={**entry.extra, PROVENANCE: provenance, RENDERED: records})


def _rendered_records(extra: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    records = extra.get(RENDERED)
    if not isinstance(records, Mapping):
        return {}
    return {key: value for key, value in records.items() if isinstance(key, str) and isinstance(value, Mapping)}


def classify(output_hash: str, members: Sequence[Member]) -> list[str]:
    """Each member's state in an output that holds ``output_hash`` (see the module's doc).

    The output is ours when a member records its hash (or, declared, records the value's hash:
    SecretZero records a template under the value, which then says only that it was written).
    A unit without that record is current when the output was last rendered (the latest
    provenance record of those that record it) after the unit's value last changed: a render
    uses every unit's current value. It is then only not recorded (``UNRECORDED``: current, the
    next render records it).
    """
    recorded = [m for m in members if m.expected == output_hash]
    ours = bool(recorded) or any(_secretzero_record(m) for m in members)
    rendered_at = max((m.recorded_at for m in recorded if m.recorded_at is not None), default=None)
    states = []
    for member in members:
        if member.expected == output_hash:
            states.append(STALE if _changed_since(member) else CURRENT)
        elif _secretzero_record(member):
            states.append(CURRENT)
        elif member.expected is None and not member.placement.rendered:
            states.append(UNTRACKED)
        elif not ours:
            states.append(CHANGED)
        else:
            changed = _updated_at(member)
            current = rendered_at is not None and changed is not None and rendered_at >= changed
            states.append(UNRECORDED if current else STALE)
    return states


def _secretzero_record(member: Member) -> bool:
    return not member.placement.rendered and member.expected == member.entry.hash


def _changed_since(member: Member) -> bool:
    """The value changed after the output was last recorded for it: the record's time is older
    than the entry's ``updated_at``. No time: unknown, no."""
    changed = _updated_at(member)
    return member.recorded_at is not None and changed is not None and member.recorded_at < changed


def _updated_at(member: Member) -> datetime | None:
    return _time(member.entry.updated_at)


def _time(stamp: str) -> datetime | None:
    try:
        return parse_time(stamp)
    except ValueError:
        return None


def _provenance_time(entry: LockEntry, target_ids: Sequence[str]) -> datetime | None:
    """When the entry's ``target_provenance`` says one of ``target_ids`` was last written."""
    provenance = entry.extra.get(PROVENANCE)
    if not isinstance(provenance, Mapping):
        return None
    times: list[datetime] = []
    for target_id in target_ids:
        records = provenance.get(target_id)
        for record in records if isinstance(records, list) else ():
            stamp = record.get("updated_at") if isinstance(record, Mapping) else None
            written = _time(stamp) if isinstance(stamp, str) else None  # one we cannot read tells nothing
            if written is not None:
                times.append(written)
    return max(times, default=None)


def is_template(placement: Placement) -> bool:
    return placement.target.type == TEMPLATE
