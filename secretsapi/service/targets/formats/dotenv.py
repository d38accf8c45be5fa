"""dotenv files: a line editor that keeps comments, blank lines, order and ``export`` prefixes.

Reads unquoted values (with `` # comment`` after them), single-quoted literals and
double-quoted values with escapes, across lines too; ``load_secretzero`` reads as SecretZero
does (one line each, outer quotes stripped, nothing unescaped).

Writes each value in the first form that every common reader (``set -a; . ./file`` in bash,
python-dotenv, docker compose, Node's dotenv, SecretZero) reads back exactly:

* bare when it has only characters no reader treats specially (empty included);
* single-quoted, taken literally by all of them, when it has no ``'`` and no line break
  (python-dotenv alone turns a ``\\\\`` pair inside single quotes into one backslash);
* double-quoted without escapes when it has a ``'`` but no ``" \\ $ ` `` and no line break;
* otherwise double-quoted, escaping ``\\ " $ ` `` as a shell does, newlines and tabs kept as
  they are (a CR becomes ``\\r``): no literal form exists, and the shell's reading is kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from secretsapi.service.targets.formats.errors import FormatError
from secretsapi.service.targets.formats.lines import splice

_ASSIGN = re.compile(r"[ \t]*(?:export[ \t]+)?(?P<key>[A-Za-z0-9_.\-]+)[ \t]*=")
_KEY = re.compile(r"[A-Za-z0-9_.\-]+")
# Bare only when no reader could take it differently: no quotes, spaces, `#`, `$`, `~`, etc.
_SIMPLE = re.compile(r"[A-Za-z0-9_./:@+,=\-]+")
_TAIL = re.compile(r"[ \t]*(?:#[^\n]*)?\r?(?:\n|$)")
# A double-quoted body up to its closing quote, a backslash taking the character after it.
_DOUBLE_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t", "$": "$", "`": "`", "'": "'"}
# A shell's escapes inside double quotes; newlines and tabs stay literal (bash keeps them), a
# CR is escaped since readers that open files in text mode would turn it into a newline.
_ENCODE = {"\\": "\\\\", '"': '\\"', "$": "\\$", "`": "\\`", "\r": "\\r"}
_ENCODE_TABLE = str.maketrans(_ENCODE)


@dataclass(frozen=True)
class _Assignment:
    key: str
    value: str
    start: int  # start of the statement's first line
    end: int  # end of its last line, after the newline
    value_start: int  # the span a new value replaces (quotes included)
    value_end: int


def _line_end(text: str, pos: int) -> int:
    """Index of the newline ending the line at ``pos`` (len(text) on the last line)."""
    eol = text.find("\n", pos)
    return len(text) if eol < 0 else eol


def _content_end(text: str, pos: int) -> int:
    end = _line_end(text, pos)
    return end - 1 if end > pos and text[end - 1] == "\r" else end


def _unescape(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] in _ESCAPES:
            out.append(_ESCAPES[body[i + 1]])
            i += 2
            continue
        out.append(ch)  # an unknown escape keeps its backslash, as shells do
        i += 1
    return "".join(out)


def _quoted(text: str, start: int) -> tuple[str, int] | None:
    """The value of the quoted string at ``start`` and the index after its closing quote.

    None when it is not a clean quoted value (unterminated, or followed by more than a
    comment): the line is then read bare, which is how SecretZero's unquoted values that
    happen to start with a quote come back exactly.
    """
    quote = text[start]
    if quote == '"':
        scanned = _DOUBLE_BODY.match(text, start + 1)  # always matches (an empty body too)
        i = scanned.end() if scanned is not None and text.startswith('"', scanned.end()) else -1
    else:
        i = text.find(quote, start + 1)
    if i < 0 or not _TAIL.match(text, i + 1):
        return None
    body = text[start + 1:i]
    return (_unescape(body) if quote == '"' else body), i + 1


def _scan(text: str) -> list[_Assignment]:
    found: list[_Assignment] = []
    pos, line_no = 0, 1
    while pos < len(text):
        content_end = _content_end(text, pos)
        line = text[pos:content_end]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            pos, line_no = _line_end(text, pos) + 1, line_no + 1
            continue
        match = _ASSIGN.match(text, pos, content_end)
        if not match:
            raise FormatError(f"line {line_no}: expected KEY=value")
        after = match.end()
        lead = after + len(text[after:content_end]) - len(text[after:content_end].lstrip(" \t"))
        quoted = _quoted(text, lead) if lead < content_end and text[lead] in "\"'" else None
        if quoted is not None:
            value, value_end = quoted
            value_start = lead
        else:
            raw = text[after:content_end]
            comment = re.search(r"[ \t]#", raw)
            raw = raw[: comment.start()] if comment else raw
            value = raw.strip(" \t")
            value_start = lead if value else after
            value_end = value_start + len(value)
        stop = _line_end(text, value_end)
        found.append(_Assignment(match["key"], value, pos, min(stop + 1, len(text)),
                                 value_start, value_end))
        line_no += text.count("\n", pos, stop) + 1
        pos = stop + 1
    return found


def load(text: str) -> dict[str, str]:
    """Key -> value; a repeated key reads as its last assignment, as loaders do."""
    return {a.key: a.value for a in _scan(text)}


def load_secretzero(text: str) -> dict[str, str]:
    """SecretZero's reading (its FileTarget._parse_dotenv): each line stripped, split at the
    first ``=``, the value stripped and one pair of matching outer quotes removed, no escapes.
    What SecretZero wrote as ``KEY="raw value"`` reads back exactly this way."""
    result: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = value.strip()
        if value and value[0] in "\"'" and value[-1] == value[0]:
            value = value[1:-1]
        result[key.strip()] = value
    return result


def encode(value: str) -> str:
    if not value or _SIMPLE.fullmatch(value):
        return value
    breaks = "\n" in value or "\r" in value
    if "'" not in value and not breaks:
        return "'" + value + "'"
    if not breaks and not any(ch in value for ch in '"\\$`'):
        return '"' + value + '"'
    return '"' + value.translate(_ENCODE_TABLE) + '"'


def render(text: str | None, updates: Mapping[str, str]) -> str:
    for key in updates:
        if not _KEY.fullmatch(key):
            raise FormatError(f"'{key}' is not a valid dotenv key (letters, digits, _ . -)")
    return splice(text, updates, scan=_scan, encode=encode, line=lambda key, value: f"{key}={value}")
