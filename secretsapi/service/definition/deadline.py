"""A deadline on sandboxed Jinja code: template rendering and interpolation stop when it passes.

The sandbox bounds what an expression may build and call, not how long it loops: three nested
``range(100000)`` loops run for days. While a render runs, a per-thread trace function is
installed (``sys.settrace`` reaches only the calling thread): it ignores every frame but those of
compiled template code (``co_filename`` ``<template>``, what Jinja gives code compiled from a
string), and in those it counts line events, which a loop produces on every pass, reading the
clock every ``_EVERY`` of them. Past the deadline it raises ``DeadlinePassed`` inside the
template's own frame, so the render unwinds like any failing template and every lock and file
is released on the way out.

The clock is the thread's CPU time: what a runaway template burns, and what a busy host does not
inflate (on a loaded machine a large but honest definition would otherwise pass a wall-clock
deadline).

Code outside templates (filters, the values a template asks for) runs untraced but for one
call event per frame, which keeps the cost of a normal render small (README: Operations).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

# Jinja's name for code compiled from a string: every template and expression of this service.
TEMPLATE_FILENAME = "<template>"
SETTING = "SERVICE_RENDER_TIMEOUT"

# Line events between two readings of the clock (a system call): a loop of the deadline's
# length passes millions of them, so the overshoot is nil and the cost of reading is shared.
_EVERY = 64

_active = threading.local()


class DeadlinePassed(Exception):
    """A template or expression ran past its deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"took longer than {SETTING} ({seconds:g} s)")
        self.seconds = seconds


@contextmanager
def deadline(seconds: float, *, started: float | None = None) -> Iterator[None]:
    """Template code run inside raises DeadlinePassed once the thread has used ``seconds`` of CPU
    time since ``started`` (a ``time.thread_time()`` reading; None: now).

    Nested uses (a variable's expression evaluated while another is) keep the outermost
    deadline: the whole interpolation or render has ``seconds``, not each part of it.
    """
    if getattr(_active, "on", False):
        yield
        return
    at = (time.thread_time() if started is None else started) + seconds
    events = 0

    def line(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal events
        if event == "line":
            events += 1
            if events % _EVERY == 0 and time.thread_time() > at:
                raise DeadlinePassed(seconds)
        return line

    def call(frame: FrameType, event: str, arg: Any) -> Any:
        return line if frame.f_code.co_filename == TEMPLATE_FILENAME else None

    previous = sys.gettrace()
    _active.on = True
    sys.settrace(call)
    try:
        yield
    finally:
        # Also after a raise, which CPython answers by removing the trace function.
        sys.settrace(previous)
        _active.on = False
