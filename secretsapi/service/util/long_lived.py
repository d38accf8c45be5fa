"""Tells whoever listens that a cache now keeps a new, large structure for the long term.

A parsed definition or lockfile of 20,000 secrets is ~200,000 objects the garbage collector
tracks. The process that serves short requests beside such caches (a gunicorn worker) uses this
to take them out of the collector's full passes (see ``project/gc_policy.py``); the engine itself
only reports, and with no listener (engine processes, commands, tests) nothing happens.
"""

from __future__ import annotations

from collections.abc import Callable

_listeners: list[Callable[[], None]] = []


def listen(listener: Callable[[], None]) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def forget(listener: Callable[[], None]) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def kept() -> None:
    """Called once a cache holds what it just built (after the build, outside its locks)."""
    for listener in list(_listeners):
        listener()
