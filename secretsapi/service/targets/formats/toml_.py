"""TOML files through tomlkit, which keeps comments, order and formatting of other keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from secretsapi.service.targets.formats.errors import FormatError

if TYPE_CHECKING:
    import tomlkit

# tomlkit is imported by the first TOML file read or written, not with the target kinds: every
# process that loads them (each command line run, web and job worker) paid 10-40 ms for it.


def _parse(text: str) -> tomlkit.TOMLDocument:
    import tomlkit
    from tomlkit.exceptions import ParseError, TOMLKitError

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
    import tomlkit

    doc = _parse(text) if text and text.strip() else tomlkit.document()
    for key, value in updates.items():
        # tomlkit inserts new plain keys before the first table, so they stay top-level.
        doc[key] = value
    return str(tomlkit.dumps(doc))
