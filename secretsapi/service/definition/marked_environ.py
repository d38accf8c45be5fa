"""The server's environment as submitted text sees it: which names are set, never a value."""

from __future__ import annotations

from collections.abc import Iterator, Mapping


class MarkedEnviron(Mapping[str, str]):
    """Answers every lookup of a set name with a marker and notes the name.

    Text that a caller submits (a document to validate, render variables) is interpolated against
    this, never the real environment: whatever an expression computes from an environment value
    is the same for every value, so no report, error or status can tell values apart. ``mark``
    None: the expression as written (``${NAME}``), so messages stay readable.
    """

    def __init__(self, environ: Mapping[str, str], mark: str | None = None) -> None:
        self._environ = environ
        self._mark = mark
        self.used: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self._environ[key]  # KeyError for absent names, as the resolver expects
        self.used.add(key)
        return f"${{{key}}}" if self._mark is None else self._mark

    def __contains__(self, key: object) -> bool:
        return key in self._environ

    def __iter__(self) -> Iterator[str]:
        return iter(self._environ)

    def __len__(self) -> int:
        return len(self._environ)
