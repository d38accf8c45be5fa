"""How a delivery is signed: Standard Webhooks (https://www.standardwebhooks.com), and the older
``X-Signature`` header kept for receivers written against it.

Standard Webhooks: ``webhook-id`` (the event's id, the same on every retry), ``webhook-timestamp``
(unix seconds) and ``webhook-signature`` (``v1,<base64 HMAC-SHA256>`` of ``<id>.<timestamp>.<body>``).
Its key is the secret's bytes after ``whsec_`` base64-decoded, as the standard's libraries read a
``whsec_`` secret (generated secrets have that form); an operator's own secret without the prefix
is keyed as its UTF-8 bytes (a library then takes the secret as bytes).

``X-Signature``: ``t=<timestamp>,v1=<hex HMAC-SHA256>`` of ``<timestamp>.<body>``, keyed with the
whole secret's UTF-8 bytes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

HEADER = "X-Signature"
STANDARD_PREFIX = "whsec_"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Signature`` header's value, ``t=<unix seconds>,v1=<hex digest>``."""
    digest = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def standard_headers(secret: str, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The three Standard Webhooks headers of one delivery attempt."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = base64.b64encode(hmac.new(standard_key(secret), signed, hashlib.sha256).digest()).decode()
    return {"webhook-id": message_id, "webhook-timestamp": str(timestamp), "webhook-signature": f"v1,{digest}"}


def standard_key(secret: str) -> bytes:
    """The HMAC key Standard Webhooks' libraries derive from ``secret``."""
    if secret.startswith(STANDARD_PREFIX):
        try:
            return base64.b64decode(secret.removeprefix(STANDARD_PREFIX), validate=True)
        except binascii.Error:
            pass  # not base64 after all: an operator's own secret, keyed as written
    return secret.encode()


def new_secret(random_bytes: bytes) -> str:
    """A generated endpoint secret in the standard's form."""
    return STANDARD_PREFIX + base64.b64encode(random_bytes).decode()
