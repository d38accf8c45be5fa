"""YAML files: a top-level mapping, edited in place so comments and layout survive.

A key whose current value is a one-line scalar gets its value replaced where it stands; a new
key is appended as ``key: value``. The edit is accepted only if the new text loads to exactly
the intended data; otherwise (anchors, block scalars, flow mappings...) the file is re-dumped
with PyYAML, which keeps other keys and their order but drops comments.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

import yaml

from secretsapi.service.targets.formats.errors import FormatError

_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./@+\-]*")


@functools.cache
def _literal_ok() -> re.Pattern[str]:
    """Characters PyYAML reads literally inside double quotes; the rest are escaped. NEL, LS and
    PS are line breaks to YAML 1.1, and a BOM is stripped, so they are escaped too. Compiled at
    the first quoted value, not at import: the class takes ~10 ms to compile, which every process
    that loads the target kinds paid."""
    return re.compile(r"[\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")

_SHORT = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\x00": "\\0"}


def _safe_load(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        # str(exc) quotes a snippet of the file, which may hold values.
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise FormatError(f"{where}invalid YAML") from None


def load(text: str) -> dict[str, Any]:
    data = _safe_load(text)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FormatError("the top level is not a YAML mapping")
    return {k: v for k, v in data.items() if isinstance(k, str)}


def _loads_as_itself(value: str) -> bool:
    # "true", "0x1f", "2026-01-02", "1_000"... load as other types and need quotes.
    try:
        return bool(yaml.safe_load(value) == value)
    except yaml.YAMLError:
        return False


def scalar(value: str) -> str:
    """A one-line YAML scalar that loads back to exactly ``value`` as a string."""
    if _PLAIN.fullmatch(value) and _loads_as_itself(value):
        return value
    literal_ok = _literal_ok()
    out = []
    for ch in value:
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif literal_ok.match(ch):
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _edit(text: str, updates: Mapping[str, str]) -> str | None:
    """The in-place edit, or None when the document's shape does not allow one."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return None
    if root is not None and (not isinstance(root, yaml.MappingNode) or root.flow_style):
        return None
    values: dict[str, yaml.Node] = {}
    for key_node, value_node in root.value if root is not None else ():
        if isinstance(key_node, yaml.ScalarNode):
            values[key_node.value] = value_node
    edits: list[tuple[int, int, str]] = []
    appended: list[str] = []
    for key, value in updates.items():
        node = values.get(key)
        if node is None:
            appended.append(f"{scalar(key)}: {scalar(value)}")
            continue
        span = text[node.start_mark.index:node.end_mark.index]
        if (not isinstance(node, yaml.ScalarNode) or node.style not in (None, "'", '"')
                or node.start_mark.line != node.end_mark.line or span[:1] in ("&", "!", "*")):
            return None
        edits.append((node.start_mark.index, node.end_mark.index, scalar(value)))
    # Two keys sharing one node (an alias) would make the spans overlap.
    if len({start for start, _, _ in edits}) != len(edits):
        return None
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    if appended:
        if not text.endswith("\n"):
            text += "\n"
        text += "".join(line + "\n" for line in appended)
    return text


def render(text: str | None, updates: Mapping[str, str]) -> str:
    if text is None or not text.strip():
        return "".join(f"{scalar(k)}: {scalar(v)}\n" for k, v in updates.items())
    data = _safe_load(text)
    if data is None:  # only comments
        data = {}
    if not isinstance(data, dict):
        raise FormatError("the top level is not a YAML mapping")
    expected = {**data, **updates}
    edited = _edit(text, updates)
    if edited is not None:
        try:
            if _safe_load(edited) == expected:
                return edited
        except FormatError:
            pass
    return yaml.safe_dump(expected, sort_keys=False, allow_unicode=True, width=1 << 30,
                          default_flow_style=False)
