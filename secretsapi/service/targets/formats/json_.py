"""JSON files: a top-level object; other keys and their order are kept, output indented by 2."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from secretsapi.service.targets.formats.errors import FormatError


def load(text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"line {exc.lineno}: invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise FormatError("the top level is not a JSON object")
    return data


def render(text: str | None, updates: Mapping[str, str]) -> str:
    data = load(text) if text else {}
    data.update(updates)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
