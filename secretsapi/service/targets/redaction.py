"""A provider's settings as the discovery endpoints and a render show them: never a credential.

Values under credential-like keys (token, secret, password, key...) and URLs' user info are
``***``; an auth block is reduced to its kind and the names of its settings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

REDACTED = "***"
_CREDENTIAL_KEY = re.compile(r"token|secret|passw|pwd|credential|private|key|auth|session|cookie|"
                             r"signature|cert", re.IGNORECASE)


def redacted_config(config: Any) -> dict[str, Any]:
    """A provider's ``config`` without credentials: values under credential-like keys and URLs'
    user info replaced by ``***``."""
    return {str(k): _redacted(k, v) for k, v in config.items()} if isinstance(config, Mapping) else {}


def redacted_auth(auth: Any) -> dict[str, Any]:
    """A provider's ``auth`` block reduced to its kind (a string) and the names of its settings:
    every other value, at the top and under ``config``, is ``***``."""
    if not isinstance(auth, Mapping):
        return {}
    shown: dict[str, Any] = {str(k): REDACTED for k in auth if k not in ("kind", "config")}
    if isinstance(auth.get("kind"), str):
        shown["kind"] = auth["kind"]
    elif "kind" in auth:
        shown["kind"] = REDACTED
    options = auth.get("config")
    if isinstance(options, Mapping):
        shown["config"] = {str(k): REDACTED for k in options}
    elif "config" in auth:
        shown["config"] = REDACTED
    return shown


def _redacted(key: Any, value: Any) -> Any:
    if isinstance(key, str) and _CREDENTIAL_KEY.search(key):
        return REDACTED
    if isinstance(value, Mapping):
        return {str(k): _redacted(k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(None, item) for item in value]
    if isinstance(value, str):
        return _without_userinfo(value)
    return value


def _without_userinfo(text: str) -> str:
    """``https://user:pass@host/`` -> ``https://***@host/``; other text unchanged."""
    if "@" not in text or "://" not in text:
        return text
    try:
        parts = urlsplit(text)
    except ValueError:
        return REDACTED
    if not parts.netloc or "@" not in parts.netloc:
        return text
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{REDACTED}@{host}"))
