"""A small threaded HTTP server on a free loopback port, the base of the protocol test peers.

Each peer counts the requests it receives (tests assert a dry run sends none), can be told to
stall every answer (``delay``: tests of client timeouts), and stops without waiting for
clients' idle keep-alive connections.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import urlsplit


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # clients keep pooled connections open; never wait for them
    peer: Peer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout tests) closes its socket mid-answer: expected


class PeerHandler(BaseHTTPRequestHandler):
    """Routes to ``peer.handle(method, path, query, headers, body) -> (status, body)``."""

    protocol_version = "HTTP/1.1"
    timeout = 10  # idle keep-alive connections end by themselves
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        peer = self.server.peer
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        with peer.lock:
            peer.requests.append((self.command, parts.path))
        if peer.delay:
            peer.released.wait(peer.delay)
        status, body = peer.handle(self.command, parts.path, parts.query, self.headers, raw)
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if data:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_LIST = _serve


class Peer:
    """Subclasses implement ``handle``; state changes happen under ``self.lock``."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.requests: list[tuple[str, str]] = []
        self.delay = 0.0  # seconds to stall before every answer
        self.released = threading.Event()  # set on stop, so stalled handlers end at once
        self._server = _Server(("127.0.0.1", 0), PeerHandler)
        self._server.peer = self
        self._thread = threading.Thread(target=self._server.serve_forever, name=type(self).__name__,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        raise NotImplementedError
