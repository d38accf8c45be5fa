"""The JSON parser, hardened: a body nested too deep is a 400, and so is an object repeating a key.

``{"dry_run": true, "dry_run": false}`` means whichever the parser keeps (Python's: the last);
a client and the server may disagree on which, so the body is refused rather than guessed at.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding  # type: ignore[attr-defined]
from rest_framework.utils.json import strict_constant


class DuplicateKey(ParseError):
    """A JSON object in the body names one key twice (400; the detail names the key)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKey(f"The request body repeats the key {key!r} in one object; send it once.")
        result[key] = value
    return result


class SafeJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        encoding = get_encoding(parser_context or {})  # DRF's: refuses bytes-to-bytes codecs (bz2_codec)
        try:
            decoded = codecs.getreader(encoding)(stream)
            return json.load(decoded, parse_constant=strict_constant, object_pairs_hook=_unique_keys)
        except RecursionError:
            raise ParseError("The request body is nested too deeply.") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
