"""A deadline on sandboxed Jinja code: template rendering and interpolation stop when it passes.

The sandbox bounds what an expression may build and call, not how long it loops: three nested
``range(100000)`` loops run for days. While a render runs, a per-thread trace function is
installed (``sys.settrace`` reaches only the calling thread): it ignores every frame but those of
compiled template code (``co_filename`` ``<template>``, what Jinja gives code compiled from a
string), and in those it checks the clock on each line event, which a loop produces on every
pass. Past the deadline it raises ``DeadlinePassed`` inside the template's own frame, so the
render unwinds like any failing template and every lock and file is released on the way out.

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

_active = threading.local()


class DeadlinePassed(Exception):
    """A template or expression ran past its deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"took longer than {SETTING} ({seconds:g} s)")
        self.seconds = seconds


@contextmanager
def deadline(seconds: float, *, started: float | None = None) -> Iterator[None]:
    """Template code run inside raises DeadlinePassed once ``seconds`` have passed since
    ``started`` (a ``time.monotonic()`` reading; None: now).

    Nested uses (a variable's expression evaluated while another is) keep the outermost
    deadline: the whole interpolation or render has ``seconds``, not each part of it.
    """
    if getattr(_active, "on", False):
        yield
        return
    at = (time.monotonic() if started is None else started) + seconds

    def line(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and time.monotonic() > at:
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
