"""Terraform ``.tfvars``: top-level ``name = value`` lines, edited in place so comments survive.

Values we write are HCL quoted strings (escapes ``\\ " \\n \\r \\t \\uNNNN``; ``${`` and ``%{``
doubled so Terraform reads them literally). Other values (numbers, lists, maps, heredocs) are
kept as they are; reading one yields its source text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from secretsapi.service.targets.formats.errors import FormatError
from secretsapi.service.targets.formats.lines import splice

_ATTR = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_\-]*)[ \t]*=[ \t]*")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_TAIL = re.compile(r"[ \t]*(?:(?:#|//)[^\n]*|/\*.*?\*/[ \t]*)?\r?(?:\n|$)")
_HEREDOC = re.compile(r"<<(-?)([A-Za-z_][A-Za-z0-9_\-]*)[ \t]*\r?\n")
_DECODE = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}
_ENCODE = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


@dataclass(frozen=True)
class _Attribute:
    key: str
    value: str
    start: int  # start of the statement (its line, when nothing precedes it there)
    end: int  # after the statement's newline
    value_start: int
    value_end: int


def _line_no(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _template_char(text: str, i: int, out: list[str]) -> int:
    """Append the literal at ``i`` of a string or heredoc, handling ``$${`` and ``%%{``."""
    if text.startswith(("$${", "%%{"), i):
        out.append(text[i] + "{")
        return i + 3
    out.append(text[i])
    return i + 1


def _string(text: str, start: int) -> tuple[str, int]:
    """The quoted string at ``start`` (its opening quote) and the index after it."""
    out: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch == "\n":
            break
        if ch != "\\":
            i = _template_char(text, i, out)
            continue
        code = text[i + 1:i + 2]
        if code in _DECODE:
            out.append(_DECODE[code])
            i += 2
        elif code in ("u", "U"):
            width = 4 if code == "u" else 8
            digits = text[i + 2:i + 2 + width]
            if len(digits) != width or not re.fullmatch(r"[0-9A-Fa-f]+", digits):
                raise FormatError(f"line {_line_no(text, i)}: invalid unicode escape")
            out.append(chr(int(digits, 16)))
            i += 2 + width
        else:
            raise FormatError(f"line {_line_no(text, i)}: invalid escape in a string")
    raise FormatError(f"line {_line_no(text, start)}: unterminated string")


def _heredoc(text: str, start: int) -> tuple[str, int] | None:
    match = _HEREDOC.match(text, start)
    if not match:
        return None
    indent, marker = match.group(1) == "-", match.group(2)
    lines: list[str] = []
    pos = match.end()
    while pos < len(text):
        eol = text.find("\n", pos)
        end = len(text) if eol < 0 else eol + 1
        line = text[pos:end]
        if line.strip() == marker:
            if indent:
                margin = min((len(s) - len(s.lstrip(" \t")) for s in lines if s.strip()), default=0)
                lines = [s[margin:] for s in lines]
            out: list[str] = []
            body, i = "".join(lines), 0
            while i < len(body):
                i = _template_char(body, i, out)
            return "".join(out), pos + len(line.rstrip("\r\n"))
        lines.append(line)
        pos = end
    raise FormatError(f"line {_line_no(text, start)}: unterminated heredoc")


def _opaque(text: str, start: int) -> tuple[str, int]:
    """Any other expression: up to the end of the line at bracket depth 0."""
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i = _string(text, i)[1]
            continue
        if depth == 0 and (ch == "\n" or ch == "#" or text.startswith("//", i)):
            break
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        i += 1
    if depth != 0:
        raise FormatError(f"line {_line_no(text, start)}: unbalanced brackets")
    end = start + len(text[start:i].rstrip())
    if end == start:
        raise FormatError(f"line {_line_no(text, start)}: missing value")
    return text[start:end], end


def _scan(text: str) -> list[_Attribute]:
    found: list[_Attribute] = []
    pos = 0
    while pos < len(text):
        if text[pos] in " \t\r\n":
            pos += 1
        elif text.startswith(("#", "//"), pos):
            eol = text.find("\n", pos)
            pos = len(text) if eol < 0 else eol
        elif text.startswith("/*", pos):
            close = text.find("*/", pos + 2)
            if close < 0:
                raise FormatError(f"line {_line_no(text, pos)}: unterminated comment")
            pos = close + 2
        else:
            found.append(_attribute(text, pos))
            pos = found[-1].end
    return found


def _attribute(text: str, pos: int) -> _Attribute:
    match = _ATTR.match(text, pos)
    if not match:
        raise FormatError(f"line {_line_no(text, pos)}: expected name = value")
    start = match.end()
    parsed: tuple[str, int] | None = None
    if text.startswith('"', start):
        parsed = _string(text, start)
        if not _TAIL.match(text, parsed[1]):
            parsed = None  # e.g. "a" + "b": keep it as an expression
    elif text.startswith("<<", start):
        parsed = _heredoc(text, start)
    value, end = parsed if parsed is not None else _opaque(text, start)
    tail = _TAIL.match(text, end)
    if not tail:
        raise FormatError(f"line {_line_no(text, end)}: unexpected text after the value")
    line_start = text.rfind("\n", 0, pos) + 1
    first = line_start if not text[line_start:pos].strip() else pos
    return _Attribute(match["key"], value, first, tail.end(), start, end)


def load(text: str) -> dict[str, str]:
    return {a.key: a.value for a in _scan(text)}


def encode(value: str) -> str:
    out = ['"']
    for i, ch in enumerate(value):
        if ch in _ENCODE:
            out.append(_ENCODE[ch])
        elif ch in "$%" and value.startswith("{", i + 1):
            out.append(ch + ch)  # "${" would be interpolated, "%{" a template directive
        elif ord(ch) < 0x20 or ch in "\x7f\x85\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out) + '"'


def render(text: str | None, updates: Mapping[str, str]) -> str:
    for key in updates:
        if not _KEY.fullmatch(key):
            raise FormatError(f"'{key}' is not a valid tfvars variable name")
    return splice(text, updates, scan=_scan, encode=encode, line=lambda key, value: f"{key} = {value}")
