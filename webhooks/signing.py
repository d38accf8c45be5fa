"""The ``X-Signature`` header: HMAC-SHA256 with the endpoint's secret over ``<timestamp>.<body>``."""

from __future__ import annotations

import hashlib
import hmac

HEADER = "X-Signature"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The header's value, ``t=<unix seconds>,v1=<hex digest>``."""
    digest = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"
