"""The JSON parser, hardened: a body nested more than MAX_JSON_DEPTH levels is a 400, and so are an
object repeating a key and a number no answer could carry (infinite, or an integer past Python's
digit limit).

``{"dry_run": true, "dry_run": false}`` means whichever the parser keeps (Python's: the last);
a client and the server may disagree on which, so the body is refused rather than guessed at.
"""

from __future__ import annotations

import codecs
import json
import math
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding  # type: ignore[attr-defined]
from rest_framework.utils.json import strict_constant


class RefusedBody(ParseError):
    """Valid JSON refused for a reason its detail states (400): the detail is shown as it is."""


class DuplicateKey(RefusedBody):
    """A JSON object in the body names one key twice (400; the detail names the key)."""


# Far deeper than any definition or request (a definition is about ten levels deep), and far below
# what the recursive code behind the parser can carry: a render body nested 500 levels parsed,
# then failed with a RecursionError while it was pickled for the engine process.
MAX_JSON_DEPTH = 64

# Python's default int/str digit limit: a longer integer could be read, but never printed back.
MAX_INT_DIGITS = 4300


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: JSON has no infinity, so no answer could carry it
        raise RefusedBody("The request body holds a number too large for a float; send it as a string.")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise RefusedBody(f"The request body holds an integer of more than {MAX_INT_DIGITS} digits; "
                          "send it as a string.")
    return int(text)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKey(f"The request body repeats the key {key!r} in one object; send it once.")
        result[key] = value
    return result


def _check_depth(document: Any) -> None:
    """RefusedBody when ``document`` nests containers more than MAX_JSON_DEPTH levels deep.

    Walked with a stack, not recursion: the check must not fail the way it guards against.
    """
    pending: list[tuple[Any, int]] = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        if depth > MAX_JSON_DEPTH:
            raise RefusedBody(f"The request body is nested more than {MAX_JSON_DEPTH} levels deep.")
        pending.extend((child, depth + 1) for child in children)


class SafeJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        encoding = get_encoding(parser_context or {})  # DRF's: refuses bytes-to-bytes codecs (bz2_codec)
        try:
            decoded = codecs.getreader(encoding)(stream)
            document = json.load(decoded, parse_constant=strict_constant, object_pairs_hook=_unique_keys,
                                 parse_float=_finite_float, parse_int=_bounded_int)
        except RecursionError:  # deeper than the decoder itself can go (about 1,000 levels)
            raise RefusedBody(f"The request body is nested more than {MAX_JSON_DEPTH} levels deep.") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        _check_depth(document)
        return document
