"""Safe YAML loading with size, alias-expansion and nesting limits, and value-free errors."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import MappingNode, Node, SequenceNode

from secretsapi.service.definition.yaml_events import LimitExceeded as _LimitExceeded
from secretsapi.service.definition.yaml_events import Loader as _StreamLoader
from secretsapi.service.definition.yaml_events import Unsupported
from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound

# The default size limit of a definition file (SERVICE_MAX_DEFINITION_BYTES); var files and
# submitted documents keep it. 16 MiB holds ~90,000 secrets in flow style, ~45,000 in block.
MAX_BYTES = 16 * 1_048_576
# A real definition uses a handful of aliases; "billion laughs" needs many uses or a huge
# expansion. The expansion bound counts the nodes aliases add beyond those written, so it
# does not grow with an honest document's size.
MAX_ALIASES = 10_000
MAX_ALIAS_EXPANSION = 1_000_000

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that counts alias uses while composing and refuses past a bound."""

    # Timestamps stay strings: dates would not survive JSON hashing and are never wanted here.
    yaml_implicit_resolvers = {  # noqa: RUF012 - PyYAML reads it as a class attribute
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.alias_uses = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(AliasEvent):
            self.alias_uses += 1
            if self.alias_uses > MAX_ALIASES:
                raise _LimitExceeded(f"too many alias uses (more than {MAX_ALIASES})")
        return super().compose_node(parent, index)


# libyaml composes the node graph ~15x faster than PyYAML's pure-Python parser (a 5,000-secret
# definition: ~0.5 s instead of ~5 s). It cannot count alias events as they arrive, so the
# graph is checked afterwards (aliases are shared nodes: _alias_uses, _check_expansion); the
# pure-Python loader stays for smaller documents libyaml rejects, so their errors read the same.
_CLoader: Any = getattr(yaml, "CSafeLoader", None)
MAX_FAST_DEPTH = 1_000
PURE_PYTHON_MAX_CHARS = 1_048_576
_OPEN = (MappingStartEvent, SequenceStartEvent)
_CLOSE = (MappingEndEvent, SequenceEndEvent)


if _CLoader is not None:

    class _BoundedCLoader(_CLoader):  # type: ignore[misc]
        yaml_implicit_resolvers = _BoundedLoader.yaml_implicit_resolvers


class _NumberOutOfRange(yaml.constructor.ConstructorError):
    """A number no answer could carry (JSON has no NaN or infinity; Python prints no integer past
    its digit limit): refused where it is written, not at the first answer that shows it."""


# Python's default limit of int/str conversion: past it, no answer or log could print the number.
MAX_INT_DIGITS = 4300
_INT_BOUND = 10**MAX_INT_DIGITS


def _bounded_int(loader: Any, node: Any) -> int:
    try:
        value: int | None = yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
    except ValueError:  # more digits than the interpreter converts
        value = None
    if value is None or abs(value) >= _INT_BOUND:
        raise _NumberOutOfRange(None, None, f"an integer of more than {MAX_INT_DIGITS} digits is not "
                                "supported (quote it to make it a string)", node.start_mark)
    return value


def _finite_float(loader: Any, node: Any) -> float:
    value: float = yaml.constructor.SafeConstructor.construct_yaml_float(loader, node)
    if not math.isfinite(value):
        raise _NumberOutOfRange(None, None, "a number that is not finite (.nan, .inf, or too large) is not "
                                "supported (quote it to make it a string)", node.start_mark)
    return value


# Both loaders, and so the one-pass path, which takes its scalar constructors from the C loader.
for _loader in (_BoundedLoader, *((_BoundedCLoader,) if _CLoader is not None else ())):
    _loader.add_constructor("tag:yaml.org,2002:int", _bounded_int)
    _loader.add_constructor("tag:yaml.org,2002:float", _finite_float)


# The common case, in one pass over libyaml's events (yamlstream); the composed paths below
# stay for what it leaves to them, so values and errors are the same either way.
_STREAM = (
    _StreamLoader(_BoundedCLoader, max_aliases=MAX_ALIASES, max_expansion=MAX_ALIAS_EXPANSION,
                  max_depth=MAX_FAST_DEPTH)
    if _CLoader is not None else None
)


def _alias_uses(root: Node) -> int:
    """Alias uses in a composed graph: every reference to a node beyond its first."""
    seen: set[int] = {id(root)}
    stack = [root]
    uses = 0
    while stack:
        for child in _children(stack.pop()):
            key = id(child)
            if key in seen:
                uses += 1
                continue
            seen.add(key)
            stack.append(child)
    return uses


def _shallow(text: str) -> bool:
    """Whether nesting stays within MAX_FAST_DEPTH. PyYAML's C composer recurses once per
    level on the C stack (50,000 levels crash a worker thread); libyaml's event parser does
    not, so its events are counted first. Syntax errors propagate."""
    depth = 0
    for event in yaml.parse(text, Loader=_BoundedCLoader):
        if isinstance(event, _OPEN):
            depth += 1
            if depth > MAX_FAST_DEPTH:
                return False
        elif isinstance(event, _CLOSE):
            depth -= 1
    return True


def _compose_fast(text: str) -> tuple[Any, Node] | None:
    """(loader, root node) composed by libyaml, or None to let the pure-Python loader word the error."""
    if _CLoader is None:
        return None
    try:
        if not _shallow(text):
            # The pure-Python composer recurses too, and gives up long before this depth.
            raise _LimitExceeded("document is nested too deeply")
        loader = _BoundedCLoader(text)
        try:
            node = loader.get_single_node()
        except BaseException:
            loader.dispose()
            raise
    except yaml.YAMLError:
        # The pure-Python loader words errors as they always read, but parses ~6 s a MiB: a
        # large document gets libyaml's error (the same position, its own wording) at once.
        if len(text) > PURE_PYTHON_MAX_CHARS:
            raise
        return None
    if node is not None and _alias_uses(node) > MAX_ALIASES:
        loader.dispose()
        raise _LimitExceeded(f"too many alias uses (more than {MAX_ALIASES})")
    return loader, node


def _check_expansion(root: Node) -> None:
    """Refuse a document whose aliases add more than MAX_ALIAS_EXPANSION nodes, without expanding.

    Aliases share node objects, so sizes are memoised per node (the memo ends up holding each
    written node once); a node reached again while it is still being counted is a recursive
    structure, which no definition needs.
    """
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            in_progress.discard(key)
            continue
        if key in sizes:
            continue
        if key in in_progress:
            raise _LimitExceeded("recursive alias: a node contains itself")
        in_progress.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in in_progress:
                raise _LimitExceeded("recursive alias: a node contains itself")
            if id(child) not in sizes:
                stack.append((child, False))
    if sizes[id(root)] - len(sizes) > MAX_ALIAS_EXPANSION:
        raise _LimitExceeded(f"aliases expand to more than {MAX_ALIAS_EXPANSION} nodes (alias bomb?)")


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _position(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return ""
    return f" at line {mark.line + 1}, column {mark.column + 1}"


def _problem(exc: yaml.YAMLError) -> str:
    # PyYAML quotes document fragments (characters, tags, alias names): keep only its wording.
    parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    wording = ", ".join(str(part) for part in parts if part) or "invalid YAML"
    return " ".join(_QUOTED.sub("…", wording).split())


def read_definition(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """The definition file's text (``read_text``); DefinitionNotFound when it does not exist."""
    try:
        return read_text(path, source=path.name, max_bytes=max_bytes)
    except FileNotFoundError:
        raise DefinitionNotFound(f"definition file not found: {path}") from None


def read_text(path: Path, *, source: str, max_bytes: int = MAX_BYTES) -> str:
    """A YAML file's text with universal newlines (as SecretZero's read_text() sees it, so text
    hashes agree), refused past ``max_bytes``: unread when its size says so, else after reading
    one byte more (a file that grows while read), never the whole file.

    FileNotFoundError propagates (callers word it); every other failure is DefinitionInvalid.
    """
    try:
        with path.open("rb") as handle:
            # read(n) allocates n bytes up front: ask for what the file holds (plus one byte,
            # to see a file that grew), not for the limit.
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:  # refused unread: its size is known
                raise DefinitionInvalid([f"{source}: file is too large (over the limit of {max_bytes} bytes)"])
            data = handle.read(size + 1)
            if size < len(data) <= max_bytes:  # it grew meanwhile: the rest, still bounded
                data += handle.read(max_bytes + 1 - len(data))
    except (FileNotFoundError, DefinitionInvalid):
        raise
    except OSError:
        raise DefinitionInvalid([f"{source}: cannot be read"]) from None
    if len(data) > max_bytes:
        raise DefinitionInvalid([f"{source}: file is too large (over the limit of {max_bytes} bytes)"])
    try:
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError:
        raise DefinitionInvalid([f"{source}: not valid UTF-8 text"]) from None


def load_yaml(text: str, *, source: str, max_bytes: int = MAX_BYTES) -> Any:
    """Parse one YAML document safely; every failure is a DefinitionInvalid naming ``source``."""
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > max_bytes:
        raise DefinitionInvalid([f"{source}: document is too large ({size} bytes, limit {max_bytes})"])
    loader: Any = None
    try:
        # The pure-Python reader's character check, so every path accepts the same characters.
        yaml.reader.Reader(text)
        if _STREAM is not None:
            try:
                return _STREAM.load(text)
            except Unsupported:
                pass  # the general path below gives the value or the error
        fast = _compose_fast(text)
        if fast is not None:
            loader, node = fast
        else:
            loader = _BoundedLoader(text)
            node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    except _LimitExceeded as exc:
        raise DefinitionInvalid([f"{source}: {exc}"]) from None
    except _NumberOutOfRange as exc:
        raise DefinitionInvalid([f"{source}{_position(exc)}: {exc.problem}"]) from None
    except yaml.reader.ReaderError as exc:
        raise DefinitionInvalid([f"{source}: unacceptable character at offset {exc.position}"]) from None
    except yaml.MarkedYAMLError as exc:
        raise DefinitionInvalid([f"{source}: invalid YAML{_position(exc)}: {_problem(exc)}"]) from None
    except yaml.YAMLError:
        raise DefinitionInvalid([f"{source}: invalid YAML"]) from None
    except RecursionError:
        raise DefinitionInvalid([f"{source}: document is nested too deeply"]) from None
    finally:
        if loader is not None:
            loader.dispose()
