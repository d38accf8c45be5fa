"""In-place editing of line-based formats (dotenv, tfvars): replace values, keep the rest."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol


class Assignment(Protocol):
    # Read-only members, so frozen dataclasses satisfy the protocol.
    @property
    def key(self) -> str: ...
    @property
    def start(self) -> int: ...  # the whole assignment, for removing a duplicate
    @property
    def end(self) -> int: ...
    @property
    def value_start(self) -> int: ...  # the span a new value replaces (quotes included)
    @property
    def value_end(self) -> int: ...


def splice(
    text: str | None,
    updates: Mapping[str, str],
    *,
    scan: Callable[[str], Sequence[Assignment]],
    encode: Callable[[str], str],
    line: Callable[[str, str], str],
) -> str:
    """Set every key of ``updates``: existing assignments are edited where they stand (so
    comments, order and other keys survive), new keys are appended with ``line(key, encoded)``."""
    if text is None or not text.strip():
        return "".join(line(key, encode(value)) + "\n" for key, value in updates.items())
    by_key: dict[str, list[Assignment]] = defaultdict(list)
    for assignment in scan(text):
        by_key[assignment.key].append(assignment)
    edits: list[tuple[int, int, str]] = []
    appended: list[str] = []
    for key, value in updates.items():
        same = by_key.get(key)
        if not same:
            appended.append(line(key, encode(value)))
            continue
        edits.append((same[0].value_start, same[0].value_end, encode(value)))
        # Later duplicates would shadow the new value and keep the old one on disk.
        edits.extend((a.start, a.end, "") for a in same[1:])
    # One pass over the text, whatever the number of edits (a file of 1,000 keys gets 1,000).
    pieces, kept = [], 0
    for start, end, replacement in sorted(edits):
        pieces += [text[kept:start], replacement]
        kept = end
    text = "".join([*pieces, text[kept:]])
    if appended:
        newline = "\r\n" if "\r\n" in text else "\n"
        if not text.endswith("\n"):
            text += newline
        text += "".join(item + newline for item in appended)
    return text
