"""A worker's garbage-collection policy (project/gc_policy.py): kept caches are frozen, and what
a freeze pins is collected at the next idle moment, or at the latest at the MAX_DEBT-th freeze."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from project import gc_policy
from secretsapi.service.util import long_lived


class Node:
    other: Node


@pytest.fixture
def policy() -> Iterator[None]:
    thresholds = gc.get_threshold()
    gc_policy.start()
    try:
        yield
    finally:
        gc_policy.stop()
        gc.set_threshold(*thresholds)


def pinned_cycle() -> weakref.ref[Node]:
    """Two objects in a cycle, alive while a cache is kept (so frozen), garbage afterwards."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    ref = weakref.ref(a)
    long_lived.kept()
    return ref


def tracked_ids() -> set[int]:
    # gc.get_objects() lists the three generations, never the frozen ones.
    return {id(o) for o in gc.get_objects()}


def test_start_keeps_the_young_generation_short(policy: None) -> None:
    assert gc.get_threshold() == gc_policy.THRESHOLDS


def test_a_kept_cache_leaves_the_collectors_generations(policy: None) -> None:
    cache = [Node() for _ in range(100)]
    assert id(cache[0]) in tracked_ids()
    long_lived.kept()
    assert id(cache[0]) not in tracked_ids()
    assert gc_policy.debt() == 1


def test_what_a_freeze_pinned_survives_collections_until_an_idle_pass(policy: None) -> None:
    ref = pinned_cycle()
    gc.collect()
    assert ref() is not None
    assert gc_policy.maintain(gc_policy.IDLE_S) is True
    assert ref() is None
    assert gc_policy.debt() == 0


def test_no_full_pass_while_the_worker_was_busy_recently(policy: None) -> None:
    ref = pinned_cycle()
    assert gc_policy.maintain(gc_policy.IDLE_S - 0.5) is False
    assert ref() is not None
    assert gc_policy.debt() == 1


def test_no_full_pass_without_a_debt(policy: None) -> None:
    assert gc_policy.maintain(gc_policy.IDLE_S * 10) is False


def test_the_debt_is_bounded_without_an_idle_moment(policy: None) -> None:
    ref = pinned_cycle()
    for _ in range(gc_policy.MAX_DEBT - 2):
        long_lived.kept()
    assert gc_policy.debt() == gc_policy.MAX_DEBT - 1
    assert ref() is not None
    long_lived.kept()
    assert ref() is None
    assert gc_policy.debt() == 0


def test_without_the_policy_a_kept_cache_changes_nothing() -> None:
    cache = [Node() for _ in range(10)]
    long_lived.kept()
    assert id(cache[0]) in tracked_ids()
