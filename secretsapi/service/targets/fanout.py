"""Run one operation's target calls concurrently: a bounded thread pool per remote provider.

Remote stores answer in tens of milliseconds; one call after another, a thousand secrets take
a minute. Each remote provider gets a pool of ``max_concurrency`` threads (its setting, default
8) for the duration of one fan-out, so a slow or throttled store never takes another's slots.
Local kinds (files, templates) run in the caller's thread, one after another, as before: they
are fast and share files. A provider with one call pending runs it in the caller's thread too.

Reads of many groups (``read_groups``: drift, repair) go through a kind's ``read_many`` when it
reads several at once (``batch`` above 1: SSM, ten parameters per request), up to ``batch``
groups of one provider a call.

Results come back in the order of the calls, so callers report and record as they did when
they called one by one. A TargetError is a result (the call failed; the others go on); any
other exception is raised once every call has ended, so no thread is left writing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import ReadBack, TargetContext, TargetKind
from secretsapi.service.targets.providers import provider_of

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


@dataclass(frozen=True)
class Call(Generic[T_co]):
    """One kind call (a group's write or read): ``target`` names the provider whose pool runs it."""

    kind: TargetKind
    target: TargetSpec
    run: Callable[[], T_co]


def fan_out(calls: Sequence[Call[T]], ctx: TargetContext) -> list[T | TargetError]:
    """Each call's result, or the TargetError it raised (an invalid ``max_concurrency`` too)."""
    results: list[T | TargetError | None] = [None] * len(calls)
    failures: dict[int, BaseException] = {}
    pools: dict[str, list[int]] = defaultdict(list)
    limits: dict[str, int] = {}
    inline: list[int] = []
    for index, call in enumerate(calls):
        if call.kind.type.startswith("local/"):
            inline.append(index)
            continue
        try:
            provider = provider_of(call.target, ctx)
            limits[provider.alias] = provider.max_concurrency
        except TargetError as exc:
            results[index] = exc
            continue
        pools[provider.alias].append(index)

    def run(index: int) -> None:
        try:
            results[index] = calls[index].run()
        except TargetError as exc:
            results[index] = exc
        except BaseException as exc:  # raised in the caller once every call has ended
            failures[index] = exc

    with ExitStack() as stack:  # leaving it waits for every pool's calls to end
        for alias, indexes in pools.items():
            if len(indexes) == 1:
                inline.extend(indexes)
                continue
            executor = stack.enter_context(ThreadPoolExecutor(
                max_workers=min(limits[alias], len(indexes)), thread_name_prefix="target-call"))
            for index in indexes:
                executor.submit(run, index)
        for index in sorted(inline):
            run(index)
    if failures:
        raise failures[min(failures)]
    return cast("list[T | TargetError]", results)  # every slot is filled by now


def read_groups(groups: Sequence[tuple[TargetKind, Sequence[Placement]]],
                ctx: TargetContext) -> list[dict[str, ReadBack] | TargetError]:
    """Each group's ``kind.read``, or the TargetError it raised; groups read concurrently."""
    calls: list[Call[list[dict[str, ReadBack] | TargetError]]] = []
    slots: list[list[int]] = []  # the groups each call reads
    batches: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, (kind, placements) in enumerate(groups):
        if kind.batch > 1:
            batches[(kind.type, placements[0].target.provider)].append(index)
        else:
            calls.append(Call(kind, placements[0].target, _one(kind, placements, ctx)))
            slots.append([index])
    for indexes in batches.values():
        kind = groups[indexes[0]][0]
        size = kind.batch
        for start in range(0, len(indexes), size):
            chunk = indexes[start:start + size]
            calls.append(Call(kind, groups[chunk[0]][1][0].target, _many(kind, [groups[i][1] for i in chunk], ctx)))
            slots.append(chunk)
    results: list[dict[str, ReadBack] | TargetError | None] = [None] * len(groups)
    for slot, outcome in zip(slots, fan_out(calls, ctx), strict=True):
        for position, index in enumerate(slot):
            results[index] = outcome if isinstance(outcome, TargetError) else outcome[position]
    return cast("list[dict[str, ReadBack] | TargetError]", results)


def _one(kind: TargetKind, placements: Sequence[Placement],
         ctx: TargetContext) -> Callable[[], list[dict[str, ReadBack] | TargetError]]:
    return lambda: [kind.read(placements, ctx)]


def _many(kind: TargetKind, groups: list[Sequence[Placement]],
          ctx: TargetContext) -> Callable[[], list[dict[str, ReadBack] | TargetError]]:
    return lambda: list(kind.read_many(groups, ctx))
