"""TOML files through tomlkit, which keeps comments, order and formatting of other keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError, TOMLKitError

from secretsapi.service.targets.formats.errors import FormatError


def _parse(text: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        # str(exc) quotes the offending character; the line is enough.
        raise FormatError(f"line {exc.line}: invalid TOML") from None
    except TOMLKitError:
        raise FormatError("invalid TOML") from None


def load(text: str) -> dict[str, Any]:
    return dict(_parse(text).unwrap())


def render(text: str | None, updates: Mapping[str, str]) -> str:
    doc = _parse(text) if text and text.strip() else tomlkit.document()
    for key, value in updates.items():
        # tomlkit inserts new plain keys before the first table, so they stay top-level.
        doc[key] = value
    return str(tomlkit.dumps(doc))
