"""One pass over libyaml's events straight to Python objects, with the loader's bounds.

PyYAML's own path composes a node graph (a Python object and two marks per node), walks it
for the bounds, then constructs: for 20,000 secrets that is ~8 s and ~250 MB of transient
objects. Here every event becomes its value at once, so only the result stays in memory and
the bounds (alias uses, alias expansion, nesting depth) are counted as the events arrive.

It covers what definitions are made of: mappings, sequences, plain and quoted scalars with
the safe loader's implicit types, anchors, aliases and merge keys. Anything else (explicit
tags beyond the core ones, complex keys, undefined or recursive aliases, a second document,
any syntax error) raises ``Unsupported``, and the caller loads the text the general way,
which gives the same value or the same error as before.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import ScalarNode


class Unsupported(Exception):
    """The document needs the general loader (or is invalid, and it will say how)."""


class LimitExceeded(Exception):
    """A bound was passed: the document is refused whichever way it is loaded."""


_TAG = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT = (_TAG + name for name in ("str", "null", "bool", "int", "float"))
_MERGE, _VALUE = _TAG + "merge", _TAG + "value"
_MAP_TAGS = {None, "!", _TAG + "map"}
_SEQ_TAGS = {None, "!", _TAG + "seq"}
# The pending key of a mapping under construction when it is a merge key (``<<``).
_MERGED = object()


class _Container:
    """An open mapping or sequence: its entries so far, and its size with aliases expanded."""

    __slots__ = ("anchor", "has_key", "is_map", "items", "key", "merges", "size")

    def __init__(self, is_map: bool, anchor: str | None) -> None:
        self.is_map = is_map
        self.anchor = anchor
        self.items: Any = {} if is_map else []
        self.merges: list[Any] | None = None  # sources of merge keys, rare
        self.size = 1
        self.key: Any = None
        self.has_key = False

    def add(self, value: Any, size: int, *, merge_key: bool = False) -> None:
        self.size += size
        if not self.is_map:
            self.items.append(value)
        elif not self.has_key:
            if merge_key:
                self.key, self.has_key = _MERGED, True
                return
            if isinstance(value, (dict, list)):
                raise Unsupported("a mapping or sequence as a key")
            self.key, self.has_key = value, True
        else:
            if self.key is _MERGED:
                self.merges = [*(self.merges or ()), value]
            else:
                self.items[self.key] = value
            self.has_key = False

    def value(self) -> Any:
        if not self.merges:
            return self.items
        return _merged(self.merges, self.items)


def _merged(merges: list[Any], own: dict[Any, Any]) -> dict[Any, Any]:
    """A mapping's merge keys applied as PyYAML's flatten_mapping does: own keys win, and of
    several sources (``<<: [*a, *b]``) the first listed wins."""
    result: dict[Any, Any] = {}
    for source in merges:
        parts = source if isinstance(source, list) else [source]
        if not parts or not all(isinstance(part, dict) for part in parts):
            raise Unsupported("a merge key whose value is not a mapping")
        for part in reversed(parts):
            result.update(part)
    result.update(own)
    return result


class Loader:
    """Builds one document from ``loader_class``'s events; ``load()`` once."""

    def __init__(self, loader_class: Any, *, max_aliases: int, max_expansion: int, max_depth: int) -> None:
        self.loader_class = loader_class
        self.max_aliases = max_aliases
        self.max_expansion = max_expansion
        self.max_depth = max_depth
        # Implicit types by first character (the safe loader has no wildcard resolvers): a plain
        # scalar whose first character starts none of them is a string without a regex.
        self.resolvers: dict[str, list[tuple[str, Any]]] = {
            k: v for k, v in loader_class.yaml_implicit_resolvers.items() if k is not None
        }

    def load(self, text: str) -> Any:
        loader = self.loader_class(text)
        try:
            return self._build(loader)
        except yaml.YAMLError as exc:
            raise Unsupported("a syntax error") from exc
        finally:
            loader.dispose()

    def _build(self, loader: Any) -> Any:
        anchors: dict[str, tuple[Any, int]] = {}
        stack: list[_Container] = []
        alias_uses = 0
        expansion = 0  # nodes that aliases add beyond those written
        root: Any = None
        documents = 0
        # One object per distinct string: keys and values such as "path" or "dotenv" repeat
        # once per secret, and the parsed definition keeps them.
        strings: dict[str, str] = {}
        # libyaml's get_event() answers None once the stream has ended.
        while (event := loader.get_event()) is not None:
            cls = type(event)
            if cls is ScalarEvent:
                value, tag = self._scalar(event)
                if tag == _STR:
                    value = strings.setdefault(value, value)
                merge_key = tag == _MERGE
                if merge_key and not (stack and stack[-1].is_map and not stack[-1].has_key):
                    raise Unsupported("a merge tag outside a key")
                self._anchor(anchors, event.anchor, value, 1)
                if stack:
                    stack[-1].add(value, 1, merge_key=merge_key)
                else:
                    root = value
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                is_map = cls is MappingStartEvent
                if event.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS):
                    raise Unsupported("an explicit collection tag")
                if len(stack) >= self.max_depth:
                    raise Unsupported("deep nesting")
                stack.append(_Container(is_map, event.anchor))
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                done = stack.pop()
                value = done.value()
                self._anchor(anchors, done.anchor, value, done.size)
                if stack:
                    stack[-1].add(value, done.size)
                else:
                    root = value
            elif cls is AliasEvent:
                found = anchors.get(event.anchor)
                if found is None:
                    raise Unsupported("an undefined or recursive alias")
                alias_uses += 1
                if alias_uses > self.max_aliases:
                    raise LimitExceeded(f"too many alias uses (more than {self.max_aliases})")
                value, size = found
                expansion += size
                if expansion > self.max_expansion:
                    raise LimitExceeded(f"aliases expand to more than {self.max_expansion} nodes (alias bomb?)")
                if stack:
                    stack[-1].add(value, size)
                else:
                    root = value
            elif cls is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise Unsupported("a second document")
            elif cls not in (StreamStartEvent, StreamEndEvent, DocumentEndEvent):
                raise Unsupported(f"event {cls.__name__}")
        return root

    @staticmethod
    def _anchor(anchors: dict[str, tuple[Any, int]], anchor: str | None, value: Any, size: int) -> None:
        if anchor is None:
            return
        if anchor in anchors:
            raise Unsupported("a duplicate anchor")
        anchors[anchor] = (value, size)

    def _scalar(self, event: ScalarEvent) -> tuple[Any, str]:
        value: str = event.value
        tag = event.tag
        if tag is None or tag == "!":
            if not event.implicit[0]:
                return value, _STR
            tag = _STR
            for candidate, pattern in self.resolvers.get(value[:1], ()):
                if pattern.match(value):
                    tag = candidate
                    break
        if tag == _STR:
            return value, tag
        if tag == _NULL:
            return None, tag
        if tag == _MERGE:
            return None, tag
        if tag == _VALUE:  # "=" as a key is a plain string to the safe constructor
            return value, _STR
        if tag in (_BOOL, _INT, _FLOAT):
            constructor = self.loader_class.yaml_constructors[tag]
            try:
                return constructor(_CONSTRUCTOR, ScalarNode(tag, value)), tag
            except (KeyError, ValueError) as exc:
                raise Unsupported("a malformed typed scalar") from exc
        raise Unsupported("an explicit scalar tag")


class _Constructor(yaml.constructor.SafeConstructor):
    """Only for the scalar constructors (bool, int, float), which read nothing else."""


_CONSTRUCTOR = _Constructor()
