"""A value derived from the last object seen, kept while that same object comes back."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LastResult(Generic[K, V]):
    """``get(key, build)`` answers ``build(key)``, built again only for a new key (by identity).

    The key is held with the value, so its id cannot be reused while cached. One thread builds
    at a time and the others wait for its result: for 20,000 secrets, four threads building
    together set a worker's peak memory. The previous value is dropped before the next build.
    """

    def __init__(self) -> None:
        self._entry: tuple[K, V] | None = None
        self._lock = threading.Lock()

    def get(self, key: K, build: Callable[[K], V]) -> V:
        entry = self._entry
        if entry is not None and entry[0] is key:
            return entry[1]
        with self._lock:
            entry = self._entry
            if entry is not None and entry[0] is key:
                return entry[1]
            self._entry = None
            value = build(key)
            self._entry = (key, value)
        return value
