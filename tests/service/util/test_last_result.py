"""LastResult: one build per key, by identity, even when threads ask together."""

from __future__ import annotations

import threading
import time

from secretsapi.service.util.last_result import LastResult


def test_the_same_key_is_built_once_and_a_new_key_again() -> None:
    memo: LastResult[object, list[object]] = LastResult()
    built: list[object] = []
    first, second = object(), object()

    def build(key: object) -> list[object]:
        built.append(key)
        return [key]

    assert memo.get(first, build) is memo.get(first, build)
    memo.get(second, build)
    assert built == [first, second]


def test_equal_but_distinct_keys_are_different_keys() -> None:
    memo: LastResult[list[int], int] = LastResult()
    first, second = [1, 2], [1, 2]  # equal, not the same object: a new definition parse
    calls: list[list[int]] = []

    def build(key: list[int]) -> int:
        calls.append(key)
        return len(calls)

    assert (memo.get(first, build), memo.get(second, build)) == (1, 2)
    assert calls[0] is first and calls[1] is second


def test_threads_that_miss_together_share_one_build() -> None:
    memo: LastResult[object, object] = LastResult()
    key, calls, results = object(), [], []
    start = threading.Barrier(8)

    def build(k: object) -> object:
        calls.append(k)
        time.sleep(0.05)  # long enough for every thread to arrive while it runs
        return object()

    def ask() -> None:
        start.wait()
        results.append(memo.get(key, build))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(calls) == 1 and len(results) == 8 and len({id(r) for r in results}) == 1
