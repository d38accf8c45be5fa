"""Safe YAML loading with size, alias-expansion and nesting limits, and value-free errors."""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, SequenceNode

from .errors import DefinitionInvalid

MAX_BYTES = 1_048_576
# A real definition uses a handful of aliases; "billion laughs" needs many uses or a huge expansion.
MAX_ALIASES = 10_000
MAX_EXPANDED_NODES = 1_000_000

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


class _LimitExceeded(Exception):
    """Raised inside the loader; turned into DefinitionInvalid with the source named."""


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


def _expanded_size(root: Node) -> int:
    """Count the nodes the document would have with every alias expanded, without expanding.

    Aliases share node objects, so sizes are memoised per node; a node reached again while
    it is still being counted is a recursive structure, which no definition needs.
    """
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            if total > MAX_EXPANDED_NODES:
                raise _LimitExceeded(
                    f"document expands to more than {MAX_EXPANDED_NODES} nodes (alias bomb?)"
                )
            sizes[key] = total
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
    return sizes[id(root)]


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


def load_yaml(text: str, *, source: str, max_bytes: int = MAX_BYTES) -> Any:
    """Parse one YAML document safely; every failure is a DefinitionInvalid naming ``source``."""
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > max_bytes:
        raise DefinitionInvalid([f"{source}: document is too large ({size} bytes, limit {max_bytes})"])
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(text)
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node)
        return loader.construct_document(node)
    except _LimitExceeded as exc:
        raise DefinitionInvalid([f"{source}: {exc}"]) from None
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
