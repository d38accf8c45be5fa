"""A listener standing in for an attacker's address: it records every request whole (method,
path, headers, body) and answers each with one fixed status (401 by default: what most stores
answer an unknown credential), or redirects every request to another address (``redirect_to``:
a store answering a write with a redirect). Over HTTPS when given a TLS context.

Tests assert that it received nothing (``requests == []``), or, as a control, which credential
reached it (``received``)."""

from __future__ import annotations

import ssl
from typing import Any

from .http_peer import Peer


class Listener(Peer):
    def __init__(self, tls: ssl.SSLContext | None = None, status: int = 401, *, redirect_to: str | None = None,
                 redirect_status: int = 307) -> None:
        super().__init__(tls)
        self.status = status
        self.redirect_to = redirect_to
        self.redirect_status = redirect_status
        self.received: list[dict[str, Any]] = []  # {"method", "path", "headers", "body"} per request

    def handle(self, method: str, path: str, query: str, headers: Any,
               body: bytes) -> tuple[int, Any] | tuple[int, Any, dict[str, str]]:
        with self.lock:
            self.received.append({"method": method, "path": path, "headers": dict(headers.items()), "body": body})
        if self.redirect_to is not None:
            return self.redirect_status, None, {"Location": self.redirect_to + path + (f"?{query}" if query else "")}
        return self.status, {}

    def throttled(self, status: int) -> Any:
        return {}

    def saw(self, text: str) -> bool:
        """Whether ``text`` reached the listener, in any header or body."""
        with self.lock:
            return any(text in str(value) for request in self.received
                       for value in (*request["headers"].values(), request["body"].decode("utf-8", "replace")))
