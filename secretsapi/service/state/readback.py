"""Read a unit's value back from its targets, keeping the copy whose hash the lockfile recorded.

What is read here leaves its store (a repair's copy, a template's render, the value endpoint), so
a target reached with the server's own credentials is read only where the operator lists it
(``targets.base.check_value_source``, SERVICE_PROVIDER_READ); otherwise it is a problem, not a copy."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from secretsapi.service.definition.model import Placement, Unit
from secretsapi.service.errors import TargetError
from secretsapi.service.targets import ReadBack, TargetContext, get_kind
from secretsapi.service.targets.base import check_value_source
from secretsapi.service.targets.fanout import read_groups
from secretsapi.service.util.hashing import sha256_text


@dataclass(frozen=True)
class Copy:
    """A value as one target holds it."""

    target_id: str
    value: str = field(repr=False)  # never in a log line or a traceback


@dataclass(frozen=True)
class UnitReadBack:
    """What a unit's targets hold: the recorded copy if any target has it, else the first other."""

    recorded: Copy | None  # the first copy whose hash equals the lockfile's
    other: Copy | None  # the first readable copy, when no target holds the recorded one
    problems: tuple[str, ...]  # targets that could not be read (TargetError messages)


def read_back(unit: Unit, recorded_hash: str, ctx: TargetContext) -> UnitReadBack:
    """Read ``unit``'s targets in definition order until one holds the recorded value.

    Kinds that hold no value (templates) and absent entries are passed over. A copy read as
    SecretZero reads it (``misencoded_value``) counts when its hash is the recorded one.
    """
    other: Copy | None = None
    problems: list[str] = []
    for placement in unit.placements:
        try:
            kind = get_kind(placement.target.type)
            check_value_source(kind, placement.target, ctx)
            back = kind.read([placement], ctx)[placement.key]
            target_id = kind.target_id(placement.target, ctx)
        except TargetError as exc:
            problems.append(exc.message)
            continue
        if back.value is None:
            continue
        for candidate in (back.value, back.misencoded_value):
            if candidate is not None and sha256_text(candidate) == recorded_hash:
                return UnitReadBack(Copy(target_id, candidate), None, tuple(problems))
        other = other or Copy(target_id, back.value)
    return UnitReadBack(None, other, tuple(problems))


def read_back_all(units: Sequence[tuple[Unit, str]], ctx: TargetContext) -> list[UnitReadBack]:
    """``read_back`` of each (unit, recorded hash), with each target group read once per round.

    Round one reads every unit's first target, round two the next target of those still without
    the recorded copy, and so on: a unit's targets are read in definition order until one holds
    it, as ``read_back`` reads them, and a file holding thousands of units is parsed once a round
    rather than once a unit (linear in the units). Groups are read concurrently (``fanout``).
    Templates are passed over: an output holds no value to copy.
    """
    found: list[_Found] = [_Found() for _ in units]
    queues: list[list[Placement]] = []
    for (unit, _), state in zip(units, found, strict=True):
        queue = []
        for placement in unit.placements:
            try:
                kind = get_kind(placement.target.type)
                if kind.type == "local/template":
                    continue
                check_value_source(kind, placement.target, ctx)
            except TargetError as exc:
                state.problems.append(exc.message)
                continue
            queue.append(placement)
        queues.append(queue)
    pending = [index for index, queue in enumerate(queues) if queue]
    while pending:
        groups: dict[tuple[str, Hashable], list[tuple[int, Placement]]] = defaultdict(list)
        for index in pending:
            placement = queues[index].pop(0)
            kind = get_kind(placement.target.type)
            try:
                groups[(kind.type, kind.group(placement.target, ctx))].append((index, placement))
            except TargetError as exc:
                found[index].problems.append(exc.message)
        batch = list(groups.items())
        reads = read_groups([(get_kind(type_), [p for _, p in members]) for (type_, _), members in batch], ctx)
        for (_, members), backs in zip(batch, reads, strict=True):
            for index, placement in members:
                if isinstance(backs, TargetError):
                    found[index].problems.append(backs.message)
                else:
                    found[index].take(placement, backs[placement.key], units[index][1], ctx)
        pending = [index for index in pending if found[index].recorded is None and queues[index]]
    return [UnitReadBack(state.recorded, None if state.recorded else state.other, tuple(state.problems))
            for state in found]


@dataclass
class _Found:
    """What one unit's targets gave so far."""

    recorded: Copy | None = None
    other: Copy | None = None
    problems: list[str] = field(default_factory=list)

    def take(self, placement: Placement, back: ReadBack, recorded_hash: str, ctx: TargetContext) -> None:
        if back.value is None:
            return
        target_id = get_kind(placement.target.type).target_id(placement.target, ctx)
        for candidate in (back.value, back.misencoded_value):
            if candidate is not None and sha256_text(candidate) == recorded_hash:
                self.recorded = Copy(target_id, candidate)
                return
        self.other = self.other or Copy(target_id, back.value)
