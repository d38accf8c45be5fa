"""The server's environment as a definition may read it: the names the operator allows, never the service's own.

A definition is untrusted input: whoever can push to the repository the service reads can write
``${NAME}``, ``source: {kind: env}`` or a secret named like a variable (the upper-case override).
The process's environment belongs to the operator, so the service reads a definition against a
``ReadableEnviron``: a view that holds only the names the operator allows (names or ``*``/``?``
patterns; none by default), and never the service's own settings (``SERVICE_*``, ``DJANGO_*``,
``DATABASE_URL*``), whatever a pattern says. A name it does not hold is exactly an unset one: the
same errors, the same defaults and the same path through the code (a pattern match and a
dictionary lookup, no I/O either way), so nothing a definition computes can tell "not allowed"
from "not set".
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Mapping

# Never readable, whatever the allow-list says (compared in upper case): the service's settings
# (its API key, its configuration), Django's, and the database URL with its password.
RESERVED_PREFIXES = ("SERVICE_", "DJANGO_", "DATABASE_URL")
# What an allow-list item may be: a variable name, with ``*`` and ``?`` as wildcards.
PATTERN = re.compile(r"[A-Za-z0-9_*?]+")


def reserved(name: str) -> bool:
    """One of the service's own settings: never read by a definition."""
    return name.upper().startswith(RESERVED_PREFIXES)


class ReadableEnviron(Mapping[str, str]):
    """``source`` as a definition sees it: the names ``allowed`` matches (None: every name, the
    command line's default), less the reserved ones. Hashable by identity: a workspace holds it."""

    def __init__(self, source: Mapping[str, str], allowed: tuple[str, ...] | None) -> None:
        for item in allowed or ():
            if not PATTERN.fullmatch(item):
                raise ValueError(f"not a variable name or pattern: {item!r}")
        self.source = source
        self.allowed = allowed
        self._match = (None if allowed is None
                       else re.compile("|".join(fnmatch.translate(item) for item in allowed) or r"(?!)").match)

    @property
    def process_wide(self) -> bool:
        """A view of this process's own environment (what a parse shared between processes may read)."""
        return self.source is os.environ

    def readable(self, name: str) -> bool:
        if not isinstance(name, str) or reserved(name):
            return False
        return self._match is None or self._match(name) is not None

    def __getitem__(self, key: str) -> str:
        # A refused name never reaches ``source``: it may note what it is asked (MarkedEnviron).
        if not self.readable(key):
            raise KeyError(key)
        return self.source[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.readable(key) and key in self.source

    def __iter__(self) -> Iterator[str]:
        return (name for name in self.source if self.readable(name))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        shown = "every name" if self.allowed is None else ", ".join(self.allowed) or "no name"
        return f"ReadableEnviron({shown})"


# The engine's default when a caller gives no environment: the command line's rule (every
# variable of the process but the service's own).
PROCESS = ReadableEnviron(os.environ, None)


def readable(environ: Mapping[str, str] | None) -> ReadableEnviron:
    """``environ`` less the reserved names (whoever built it); None: the process's environment."""
    if environ is None:
        return PROCESS
    return environ if isinstance(environ, ReadableEnviron) else ReadableEnviron(environ, None)
