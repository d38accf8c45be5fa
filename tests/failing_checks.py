"""A failing system check, for the tests of which of Django's checks a command runs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core import checks


@contextmanager
def failing_check(tag: str, code: str) -> Iterator[None]:
    """A system check of ``tag`` that fails with error ``code`` while the block runs."""
    def failing(**kwargs: Any) -> list[checks.CheckMessage]:
        return [checks.Error("broken", id=code)]

    checks.register(failing, tag)
    try:
        yield
    finally:
        checks.registry.registry.registered_checks.discard(failing)
