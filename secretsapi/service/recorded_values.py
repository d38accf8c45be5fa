"""The last line of defence of the answers that show a definition (render, validate): any string
whose SHA-256 is a value hash the lockfiles record is withheld, in the answer and in its errors.

Whatever route a value took into such an answer (a var file, a variable, a message quoting a
rendered path), it cannot leave as written. Strings the caller itself sent are exempt: showing
them back tells the caller nothing, and withholding them would confirm a guessed value.
Linear in the answer's size: every string is hashed once, as are the quoted parts of messages.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from secretsapi.service.errors import DefinitionInvalid, ServiceError
from secretsapi.service.state.lockfile_io import read_lockfile
from secretsapi.service.workspace import Workspace

WITHHELD = "***"
_HEX64 = re.compile(r"[0-9a-f]{64}")
# The quoted parts of a message (values are quoted with repr, in either quote).
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")

T = TypeVar("T")


def recorded_hashes(ws: Workspace, *, loaded: bool = True) -> frozenset[str]:
    """Every value and target hash of the shared and the machine-local lockfile. Until the var
    files are known to be acceptable (``loaded``), only where the lockfile is without them:
    placing it with them reads them."""
    places = [replace(ws, var_files=()), *((ws,) if loaded and ws.var_files else ())]
    hashes: set[str] = set()
    for path in {p for place in places for p in (place.lockfile_path, place.local_lockfile_path)}:
        for entry in read_lockfile(path).raw_entries().values():
            if not isinstance(entry, Mapping):
                continue
            targets = entry.get("targets")
            found = [entry.get("hash"), *(targets.values() if isinstance(targets, Mapping) else ())]
            hashes.update(h for h in found if isinstance(h, str) and _HEX64.fullmatch(h))
    return frozenset(hashes)


def without_recorded_values(ws: Workspace, answer: Callable[[], T], *, sent: Any = None) -> T:
    """``answer()`` with every recorded value withheld from its result and from the message of
    a ServiceError it raises; ``sent`` is what the caller sent (its strings are exempt)."""
    known = frozenset(_strings(sent))
    # Before the answer: a failed one may still hold what it read (a definition too large to
    # parse) while its error is handled. A refused var file must not be read to place the
    # lockfile: until the answer accepts them, the places without them.
    hashes = recorded_hashes(ws, loaded=False)
    try:
        result = answer()
    except ServiceError as exc:
        _withhold_error(exc, hashes, known)
        raise
    shown: T = withhold(result, recorded_hashes(ws) if ws.var_files else hashes, known)
    return shown


def withhold(value: Any, hashes: frozenset[str], known: frozenset[str] = frozenset()) -> Any:
    """``value`` (JSON-like data or a dataclass of it) with recorded values replaced."""
    if not hashes:
        return value
    kind = type(value)
    # Exact types first (strings are most of an answer; ABC checks cost more than the hashing),
    # and loops, not comprehensions: each comprehension is a stack frame, and nesting is deep.
    if kind is str:
        return _text(value, hashes, known)
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        shown = {}
        for key, item in value.items():
            shown[withhold(key, hashes, known)] = withhold(item, hashes, known)
        return shown
    if kind is list or kind is tuple:
        items = []
        for item in value:
            items.append(withhold(item, hashes, known))
        return kind(items)
    if kind is int or kind is float:
        # A var file may read a numeric value as a number; only its text was ever hashed.
        return WITHHELD if _recorded(_number_text(value), hashes, known) else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: withhold(getattr(value, f.name), hashes, known) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)
    if isinstance(value, str):
        return _text(value, hashes, known)
    return value


def _number_text(value: float) -> str:
    try:
        return str(value)
    except ValueError:  # an integer past Python's digit limit: no value is written that way
        return ""


def _text(text: str, hashes: frozenset[str], known: frozenset[str]) -> str:
    if _recorded(text, hashes, known):
        return WITHHELD
    if "'" not in text and '"' not in text:
        return text

    def part(match: re.Match[str]) -> str:
        inner = match.group(1) if match.group(1) is not None else match.group(2)
        quoted = match.group(0)
        return quoted[0] + WITHHELD + quoted[-1] if _recorded(inner, hashes, known) else quoted

    return _QUOTED.sub(part, text)


def _recorded(text: str, hashes: frozenset[str], known: frozenset[str]) -> bool:
    if text in known:
        return False
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() in hashes


def _withhold_error(exc: ServiceError, hashes: frozenset[str], known: frozenset[str]) -> None:
    if not hashes:
        return
    if isinstance(exc, DefinitionInvalid):
        exc.errors = [_text(e, hashes, known) for e in exc.errors]
        exc.message = "; ".join(exc.errors) or exc.message
    else:
        exc.message = _text(exc.message, hashes, known)
    exc.args = (exc.message,)


def _strings(value: Any) -> Iterable[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            yield _number_text(item)
