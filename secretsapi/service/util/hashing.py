"""SHA-256 hashing of secret values and texts, as the lockfile records them."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_value(value: Any) -> str:
    """Hash a value: strings as UTF-8, anything else as compact JSON with sorted keys."""
    if isinstance(value, str):
        return sha256_text(value)
    return sha256_text(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False))

