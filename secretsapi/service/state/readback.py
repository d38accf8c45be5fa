"""Read a unit's value back from its targets, keeping the copy whose hash the lockfile recorded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from secretsapi.service.definition.model import TargetSpec, Unit
from secretsapi.service.errors import TargetError
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.fanout import Call, fan_out
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
    """``read_back`` of each (unit, recorded hash), units read concurrently: a unit's reads run
    on the pool of its first target's provider (``fanout``); a unit usually has one or two."""
    results: list[UnitReadBack | None] = [None] * len(units)
    calls: list[Call[UnitReadBack]] = []
    positions: list[int] = []
    for index, (unit, recorded_hash) in enumerate(units):
        first = _first_known(unit)
        if first is None:  # nothing it can read: read_back only collects the problems
            results[index] = read_back(unit, recorded_hash, ctx)
            continue
        calls.append(Call(get_kind(first.type), first, _reader(unit, recorded_hash, ctx)))
        positions.append(index)
    for index, found in zip(positions, fan_out(calls, ctx), strict=True):
        # A TargetError here comes from the pool itself: the provider's max_concurrency is invalid.
        results[index] = UnitReadBack(None, None, (found.message,)) if isinstance(found, TargetError) else found
    return cast("list[UnitReadBack]", results)  # every slot is filled by now


def _first_known(unit: Unit) -> TargetSpec | None:
    for placement in unit.placements:
        try:
            get_kind(placement.target.type)
        except TargetError:
            continue
        return placement.target
    return None


def _reader(unit: Unit, recorded_hash: str, ctx: TargetContext) -> Callable[[], UnitReadBack]:
    return lambda: read_back(unit, recorded_hash, ctx)
