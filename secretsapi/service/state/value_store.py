"""Generate values and store them: one write per target group, then the lockfile entries.

Shared by sync and rotation (through ``state.write``) so both write targets and record state
the same way: ``generate_values`` makes the values, ``store`` writes the targets while the
caller holds their locks, ``record`` puts the entries into the lockfile document the caller
then commits.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from secretsapi.service.definition.model import Definition, Placement, SecretDef, Unit
from secretsapi.service.errors import GeneratorError, LockEntryCorrupted, LockfileUnwritable, LockLost, TargetError
from secretsapi.service.generators import generate
from secretsapi.service.results import OperationError
from secretsapi.service.state.lockfile import LockDocument, LockEntry, format_time
from secretsapi.service.state.locks import ALL_STRIPES, Held, stripe_of
from secretsapi.service.state.readback import read_back
from secretsapi.service.targets import TargetContext, TargetKind, get_kind
from secretsapi.service.targets.fanout import Call, fan_out
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.util.progress import Progress


@dataclass(frozen=True)
class Written:
    """What the lockfile must learn about one unit: its new value's hash and where it is."""

    secret: SecretDef
    lock_key: str
    value_hash: str
    targets: dict[str, str]  # target id -> recorded hash, in definition order


@dataclass
class StoreOutcome:
    stored: list[str] = field(default_factory=list)  # secrets whose new value is recorded
    failed: list[str] = field(default_factory=list)  # secrets whose new value is stored nowhere
    errors: list[OperationError] = field(default_factory=list)
    written: list[Written] = field(default_factory=list)


@dataclass(frozen=True)
class _Job:
    secret: SecretDef
    unit: Unit
    value: str = field(repr=False)  # never in a log line or a traceback


@dataclass(frozen=True)
class Values:
    """A write's new values, generated before any target is touched (see ``generate_values``)."""

    work: Sequence[tuple[SecretDef, Sequence[Unit]]]
    jobs: list[_Job]
    failed: frozenset[str]  # secrets a generator failed for: none of their targets is written
    errors: list[OperationError]  # the generators'
    ctx: TargetContext  # reads other units' current values (templates, ``merge: false`` files)
    definition: Definition

    def expected(self) -> StoreOutcome:
        """``store``'s outcome if every target is written: each placement recorded with a hash
        of the length a write records (64 hex digits), so the lockfile it gives is as large."""
        expected = StoreOutcome()
        for job in self.jobs:
            hashes = {placement_id: sha256_text(job.value) for placement_id in _target_ids(job.unit, self.ctx)}
            expected.written.append(Written(job.secret, job.unit.lock_key, sha256_text(job.value), hashes))
        for secret, _ in self.work:
            (expected.failed if secret.name in self.failed else expected.stored).append(secret.name)
        return expected


def generate_values(
    definition: Definition,
    doc: LockDocument,
    work: Sequence[tuple[SecretDef, Sequence[Unit]]],
    *,
    allow_scripts: bool,
    progress: Progress | None = None,
) -> Values:
    """A new value for every unit in ``work``; a generator that fails fails its secret.

    ``doc`` is only read (other units' current values, for templates and ``merge: false``
    files, when ``store`` writes). ``progress`` counts the secrets whose values are drawn; the
    write counts the last one once every target is written.
    """
    errors: list[OperationError] = []
    failed: set[str] = set()
    jobs: list[_Job] = []
    for done, (secret, units) in enumerate(work):
        # The targets are not written yet: the last secret counts once they are.
        if progress is not None:
            progress(done, len(work))
        for unit in units:
            try:
                value = generate(unit.generator, allow_scripts=allow_scripts, cwd=definition.base_dir)
                jobs.append(_Job(secret, unit, value))
            except GeneratorError as exc:
                errors.append(OperationError(secret.name, None, exc.message))
                failed.add(secret.name)
    ctx = _context(definition, doc, {job.unit.lock_key: job.value for job in jobs})
    return Values(work, jobs, frozenset(failed), errors, ctx, definition)


def store(values: Values, locks: Held) -> StoreOutcome:
    """Write every placement of ``values``' units; the caller holds ``locks`` (checked before
    each batch of target writes: LockLost stops the write there).

    A target that fails leaves the others written (rule 5); the unit is then recorded with
    only the targets that hold the new value.
    """
    outcome = StoreOutcome(errors=list(values.errors))
    failed = set(values.failed)
    jobs = values.jobs
    written: dict[str, dict[str, str]] = defaultdict(dict)
    try:
        _write_targets(jobs + _exclusive_companions(values.definition, jobs, values.ctx), values.ctx,
                       outcome.errors, locks, written)
    except LockLost as exc:
        hide = values.definition.environment_hidden
        keys = {job.unit.lock_key for job in jobs}  # companions were rewritten with their own values
        changed = {key: [hide(target) for target in hashes] for key, hashes in written.items() if key in keys}
        if not changed:
            raise
        raise after_writes(exc, changed) from None

    for job in jobs:
        hashes = _in_definition_order(job.unit, written.get(job.unit.lock_key, {}), values.ctx)
        if job.unit.placements and not hashes:
            failed.add(job.secret.name)
            continue
        outcome.written.append(Written(job.secret, job.unit.lock_key, sha256_text(job.value), hashes))

    for secret, _ in values.work:
        (outcome.failed if secret.name in failed else outcome.stored).append(secret.name)
    return outcome


def _target_ids(unit: Unit, ctx: TargetContext) -> list[str]:
    ids = []
    for placement in unit.placements:
        try:
            ids.append(get_kind(placement.target.type).target_id(placement.target, ctx))
        except TargetError:
            continue
    return ids


def written_targets(
    outcome: StoreOutcome, *, partial_only: bool, hide: Callable[[str], str] = lambda text: text,
) -> dict[str, list[str]]:
    """Lock key -> the target ids that hold the unit's new value: for every unit written, or
    (``partial_only``) for the units of secrets a target failed for. ``hide`` rewrites each id
    (a path built from the environment is shown by its expression, never the value)."""
    troubled = {error.secret for error in outcome.errors}
    return {item.lock_key: [hide(target) for target in item.targets] for item in outcome.written
            if not partial_only or item.secret.name in troubled}


# Units named in the audit facts of a write that stopped after its targets were written.
WRITTEN_LISTED = 100


def after_writes(exc: LockfileUnwritable | LockLost,
                 written: Mapping[str, list[str]]) -> LockfileUnwritable | LockLost:
    """``exc`` (the lockfile failed, or a lock was lost) once targets took new values: its
    message says how many, its details which (``written``: lock key -> target ids)."""
    targets = sum(len(ids) for ids in written.values())
    details: dict[str, object] = {"written_targets": dict(list(written.items())[:WRITTEN_LISTED])}
    if len(written) > WRITTEN_LISTED:
        details["written_targets_not_listed"] = len(written) - WRITTEN_LISTED
    return type(exc)(f"{exc.message}; {targets} target(s) now hold new values the lockfile does not "
                     "record (the audit row lists them)", details)


def rewrite(
    definition: Definition, doc: LockDocument, units: Sequence[tuple[SecretDef, Unit, str]], locks: Held,
) -> tuple[dict[str, dict[str, str]], list[OperationError]]:
    """Write each unit's known ``value`` to its placements (a repair: nothing is generated).

    Returns lock key -> {target id: recorded hash} for the placements written, and the errors.
    ``merge: false`` files get their other units' current values, as in ``store``.
    """
    jobs = [_Job(secret, unit, value) for secret, unit, value in units]
    ctx = _context(definition, doc, {job.unit.lock_key: job.value for job in jobs})
    errors: list[OperationError] = []
    written: dict[str, dict[str, str]] = defaultdict(dict)
    _write_targets(jobs + _exclusive_companions(definition, jobs, ctx), ctx, errors, locks, written)
    keys = {job.unit.lock_key for job in jobs}
    return {key: hashes for key, hashes in written.items() if key in keys}, errors


def record(doc: LockDocument, outcome: StoreOutcome, *, now: datetime, rotation: bool) -> None:
    """Put ``outcome``'s entries into ``doc``, each over the entry ``doc`` holds now.

    ``rotation`` decides the metadata: a rotation sets ``last_rotated`` and counts one more
    rotation (rule 1); a sync keeps both (rule 2).
    """
    stamp = format_time(now)
    for item in outcome.written:
        doc.set_entry(item.lock_key, _entry(doc, item, stamp, rotation))


def stripes_for(definition: Definition, work: Iterable[tuple[SecretDef, Sequence[Unit]]]) -> frozenset[int]:
    """The target-lock stripes a write of ``work`` needs (see ``state.locks``).

    A template renders any unit's value, so writing one takes every stripe. A unit with no
    target is locked by its lock key, so two writes of it still take turns.
    """
    ctx = TargetContext.of(definition)
    stripes: set[int] = set()
    for _, units in work:
        for unit in units:
            if not unit.placements:
                stripes.add(stripe_of(("unit", unit.lock_key)))
            for placement in unit.placements:
                group = _group_of(placement, ctx)
                if group is None:
                    continue  # the write reports the unknown kind
                if group[0] == "local/template":
                    return ALL_STRIPES
                stripes.add(stripe_of(group))
    return frozenset(stripes)


def _in_definition_order(unit: Unit, hashes: dict[str, str], ctx: TargetContext) -> dict[str, str]:
    """Target hashes in the order the definition lists the targets, not the order of writes."""
    ordered: dict[str, str] = {}
    for placement in unit.placements:
        try:
            target_id = get_kind(placement.target.type).target_id(placement.target, ctx)
        except TargetError:
            continue
        if target_id in hashes:
            ordered[target_id] = hashes[target_id]
    return ordered


def _entry(doc: LockDocument, item: Written, stamp: str, rotation: bool) -> LockEntry:
    try:
        old = doc.entry(item.lock_key)
    except LockEntryCorrupted:
        old = None  # only a forced operation gets here; the corrupted entry is replaced
    value_hash, hashes = item.value_hash, item.targets
    if old is None:
        return LockEntry(
            hash=value_hash, created_at=stamp, updated_at=stamp,
            last_rotated=stamp if rotation else None, rotation_count=1 if rotation else 0,
            definition_hash=item.secret.definition_hash, targets=hashes, extra={},
        )
    return LockEntry(
        hash=value_hash, created_at=old.created_at, updated_at=stamp,
        last_rotated=stamp if rotation else old.last_rotated,
        rotation_count=old.rotation_count + 1 if rotation else old.rotation_count,
        definition_hash=item.secret.definition_hash, targets=hashes, extra=old.extra,
    )


def _exclusive_companions(definition: Definition, jobs: list[_Job], ctx: TargetContext) -> list[_Job]:
    """Other units stored in a ``merge: false`` file that this run rewrites.

    Such a file holds only the keys of one write, so every unit placed in it must be part of
    that write, with its current value, or syncing one secret would erase the others.
    """
    exclusive: set[tuple[str, Hashable]] = set()
    for job in jobs:
        for placement in job.unit.placements:
            if placement.target.config.get("merge", True) is False:
                try:
                    kind = get_kind(placement.target.type)
                except TargetError:
                    continue
                exclusive.add((kind.type, kind.group(placement.target, ctx)))
    if not exclusive:
        return []
    busy = {job.unit.lock_key for job in jobs}
    companions: list[_Job] = []
    for secret in definition.secrets:
        for unit in secret.units:
            if unit.lock_key in busy:
                continue
            shared = [p for p in unit.placements if _group_of(p, ctx) in exclusive]
            value = ctx.value_of(unit.lock_key) if shared else None
            if value is not None:
                companions.append(_Job(secret, Unit(unit.lock_key, unit.generator, tuple(shared)), value))
    return companions


def _group_of(placement: Placement, ctx: TargetContext) -> tuple[str, Hashable] | None:
    try:
        kind = get_kind(placement.target.type)
    except TargetError:
        return None
    return kind.type, kind.group(placement.target, ctx)


# Target group writes between two checks that the write still holds its locks.
BATCH = 64


def _write_targets(
    jobs: Iterable[_Job], ctx: TargetContext, errors: list[OperationError], locks: Held,
    written: dict[str, dict[str, str]],
) -> None:
    """Write every placement, one call per target group, into ``written``: lock key -> {target
    id: hash} (what was written so far, when LockLost stops it).

    Groups are written concurrently (``fanout``: a pool per remote provider), templates after
    every other kind, ``BATCH`` groups at a time, ``locks`` checked before each batch. The
    caller holds every group's lock until it commits the lockfile.
    """
    groups: dict[tuple[str, Hashable], list[tuple[_Job, Placement]]] = defaultdict(list)
    for job in jobs:
        for placement in job.unit.placements:
            try:
                kind = get_kind(placement.target.type)
                groups[(kind.type, kind.group(placement.target, ctx))].append((job, placement))
            except TargetError as exc:
                errors.append(OperationError(job.secret.name, placement.target.type, exc.message))

    ordered = sorted(groups.items(), key=lambda g: g[0][0])
    # Value-holding kinds first: a template renders the values the others just received.
    for templates in (False, True):
        kinds = [(get_kind(type_), members) for (type_, _), members in ordered
                 if (type_ == "local/template") == templates]
        for start in range(0, len(kinds), BATCH):
            _write_batch(kinds[start:start + BATCH], ctx, errors, locks, written)


def _write_batch(batch: list[tuple[TargetKind, list[tuple[_Job, Placement]]]], ctx: TargetContext,
                 errors: list[OperationError], locks: Held, written: dict[str, dict[str, str]]) -> None:
    locks.check()
    calls = [Call(kind, members[0][1].target, _writer(kind, members, ctx)) for kind, members in batch]
    for (kind, members), hashes in zip(batch, fan_out(calls, ctx), strict=True):
        if isinstance(hashes, TargetError):
            for job, placement in members:
                errors.append(OperationError(job.secret.name, kind.target_id(placement.target, ctx),
                                             hashes.message))
            continue
        for job, placement in members:
            written[job.unit.lock_key][kind.target_id(placement.target, ctx)] = hashes[placement.key]


def _writer(kind: TargetKind, members: list[tuple[_Job, Placement]],
            ctx: TargetContext) -> Callable[[], dict[str, str]]:
    return lambda: kind.write([(placement, job.value) for job, placement in members], ctx)


def _context(definition: Definition, doc: LockDocument, values: dict[str, str]) -> TargetContext:
    units = {unit.lock_key: unit for secret in definition.secrets for unit in secret.units}

    def value_of(lock_key: str) -> str | None:
        if lock_key in values:
            return values[lock_key]
        unit = units.get(lock_key)
        return None if unit is None else _read_current(unit, doc, ctx)

    ctx = TargetContext.of(definition, value_of)
    return ctx


def _read_current(unit: Unit, doc: LockDocument, ctx: TargetContext) -> str | None:
    """The unit's current value, read back from a target whose content matches the lockfile."""
    try:
        entry = doc.entry(unit.lock_key)
    except LockEntryCorrupted:
        return None
    if entry is None:
        return None
    recorded = read_back(unit, entry.hash, ctx).recorded
    return None if recorded is None else recorded.value
