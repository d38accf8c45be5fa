"""Bounds on what interpolation builds: each string, and the rendered definition as a whole.

Sizes are counted before anything is built (a string doubled 23 times is refused at the level
where it would pass the bound, not after the worker has held a gigabyte). A size is
``len(str(value))`` or an upper bound of it, in characters.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from secretsapi.service.definition.deadline import DeadlinePassed

# Defaults of SERVICE_MAX_INTERPOLATED_BYTES and SERVICE_MAX_RENDERED_BYTES: a value far above any
# key or certificate chain, and a rendered definition four times the largest file accepted.
MAX_INTERPOLATED_BYTES = 1_048_576
MAX_RENDERED_BYTES = 64 * 1_048_576
# Default of SERVICE_RENDER_TIMEOUT: seconds for one interpolation, or one template's render.
RENDER_SECONDS = 10.0
# What str() gives for objects that are neither text, numbers nor containers (a generator).
_OPAQUE = 64
_NUMBER = re.compile(r"\d+")
# A width or precision taken from an argument: '%*d' or '{:{w}}'.
_ARGUMENT_WIDTH = re.compile(r"%[-#0 +]*\*|\{[^{}]*\{")


@dataclass(frozen=True)
class InterpolationLimits:
    string_bytes: int = MAX_INTERPOLATED_BYTES
    rendered_bytes: int = MAX_RENDERED_BYTES
    render_seconds: float = RENDER_SECONDS


class TooLarge(Exception):
    """What an expression would build is over a limit; raised before it is built."""


class Budget:
    """One interpolation's limits and what it has built so far."""

    def __init__(self, limits: InterpolationLimits) -> None:
        self.limits = limits
        self.spent = 0
        # Once the whole is over its bound, nothing more is rendered (and reported once).
        self.exhausted = False
        # The interpolation's expressions share one deadline (deadline.py: CPU time), counted from here.
        self.started = time.thread_time()

    def fit(self, size: int) -> None:
        """Refuse to build one string of ``size`` characters past the string limit."""
        if size > self.limits.string_bytes:
            raise TooLarge(
                f"interpolated value larger than SERVICE_MAX_INTERPOLATED_BYTES ({self.limits.string_bytes})"
            )

    def spend(self, value: Any) -> None:
        """Count an interpolated value towards the rendered definition's bound."""
        self.spent += size_of(value, self.limits.rendered_bytes)
        if self.spent > self.limits.rendered_bytes:
            self.exhausted = True
            raise TooLarge(
                f"rendered definition larger than SERVICE_MAX_RENDERED_BYTES ({self.limits.rendered_bytes})"
            )

    def check_deadline(self) -> None:
        """DeadlinePassed once the interpolation has run SERVICE_RENDER_TIMEOUT seconds."""
        if time.thread_time() - self.started > self.limits.render_seconds:
            raise DeadlinePassed(self.limits.render_seconds)

    def fit_value(self, value: Any) -> None:
        self.fit(size_of(value, self.limits.string_bytes))


# The budget of the interpolation running in this thread, for the sandbox's operators and filters.
_current: ContextVar[Budget] = ContextVar("interpolation_budget")
_DEFAULT = Budget(InterpolationLimits())


def current() -> Budget:
    return _current.get(_DEFAULT)


def enter(budget: Budget) -> Any:
    return _current.set(budget)


def leave(token: Any) -> None:
    _current.reset(token)


def size_of(value: Any, limit: int) -> int:
    """At least ``len(str(value))``, counted without building it; stops counting past ``limit``."""
    if isinstance(value, str):
        return len(value)
    return _nested(value, limit)


def _nested(value: Any, limit: int) -> int:
    """At least the length of ``repr(value)`` (containers show their items' repr)."""
    if isinstance(value, str):
        if value.isprintable():
            return len(value) + value.count("\\") + value.count("'") + 2
        return 10 * len(value) + 2  # '\U0010ffff' at worst
    if value is None or isinstance(value, bool):
        return 5
    if isinstance(value, int):
        return value.bit_length() // 3 + 2  # log10(2) < 1/3
    if isinstance(value, float):
        return 24
    if isinstance(value, Mapping):
        items: Iterable[Any] = (part for pair in value.items() for part in pair)
    elif isinstance(value, Collection) and not isinstance(value, bytes | bytearray):
        items = value
    else:
        return len(value) * 4 + 3 if isinstance(value, bytes | bytearray) else _OPAQUE
    total = 16  # brackets, or a view's name: dict_items([...])
    for item in items:
        total += _nested(item, limit) + 2
        if total > limit:
            break
    return total


def replace_bound(text: str, old: str, new: str, count: int = -1) -> int:
    hits = len(text) + 1 if old == "" else text.count(old)
    if count >= 0:
        hits = min(hits, count)
    return len(text) + hits * max(0, len(new) - len(old))


def join_bound(items: Collection[Any], separator: str, limit: int) -> int:
    total = max(0, len(items) - 1) * len(separator)
    for item in items:
        total += size_of(item, limit)
        if total > limit:
            break
    return total


def format_bound(template: str, arguments: Iterable[Any], limit: int) -> int:
    """``template % arguments`` or ``template.format(*arguments)``: the template, its widths and
    precisions, and the arguments (an integer counting as a width when the template takes one)."""
    widths = _ARGUMENT_WIDTH.search(template) is not None
    # A number too long to convert is over any limit anyway.
    total = len(template) + sum(int(n) if len(n) < 10 else limit + 1 for n in _NUMBER.findall(template))
    for argument in arguments:
        total += weight(argument, limit) if widths else size_of(argument, limit)
        if total > limit:
            break
    return total


def weight(argument: Any, limit: int) -> int:
    """An argument's part in a method's result: its size, or its magnitude if a number."""
    if isinstance(argument, int) and not isinstance(argument, bool):
        return abs(argument)
    return size_of(argument, limit)
