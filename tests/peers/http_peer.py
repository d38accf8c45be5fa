"""A small threaded HTTP server on a free loopback port, the base of the protocol test peers.

Each peer counts the requests it receives (tests assert a dry run sends none), can be told to
stall every answer (``delay``: tests of client timeouts), to hold every request until a test
lets them go (``hold``, ``wait_in_flight``: tests of concurrent clients), to answer the next
requests with 429 or 503 as the real server does when it throttles (``throttle``), and stops
without waiting for clients' idle keep-alive connections. Given an ``ssl.SSLContext`` it serves
HTTPS (stores whose SDKs refuse plain HTTP); ``handle`` may return response headers as a third item.
"""

from __future__ import annotations

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import unquote, urlsplit


def segments(path: str) -> list[str]:
    """A REST path's segments, each percent-decoded on its own (an encoded slash stays in its segment)."""
    return [unquote(part) for part in path.strip("/").split("/")]


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
    # Headers and body go out in two writes: with Nagle's algorithm the body would wait for the
    # client's delayed ACK (up to 40 ms per answer), which no real server makes clients wait.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        peer = self.server.peer
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        with peer.arrived:
            peer.requests.append((self.command, parts.path))
            peer.in_flight += 1
            peer.max_in_flight = max(peer.max_in_flight, peer.in_flight)
            peer.arrived.notify_all()
        try:
            if peer.delay:
                peer.released.wait(peer.delay)
            if peer.held is not None:
                peer.held.wait(10)
            throttled = peer.next_throttle()
            if throttled is not None:
                status, retry_after = throttled
                body, headers = peer.throttled(status), {} if retry_after is None else {"Retry-After": retry_after}
            else:
                answer = peer.handle(self.command, parts.path, parts.query, self.headers, raw)
                status, body = answer[0], answer[1]
                headers = answer[2] if len(answer) > 2 else {}
        finally:
            with peer.lock:
                peer.in_flight -= 1
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if data:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_LIST = _serve


class Peer:
    """Subclasses implement ``handle``; state changes happen under ``self.lock``."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.lock = threading.RLock()
        self.requests: list[tuple[str, str]] = []
        self.delay = 0.0  # seconds to stall before every answer
        self.arrived = threading.Condition(self.lock)  # notified at every request
        self.in_flight = 0  # requests being answered now
        self.max_in_flight = 0
        self.held: threading.Event | None = None  # set by hold(): requests wait until it is set
        self._throttles: list[tuple[int, str | None]] = []  # next answers: (status, Retry-After)
        self.released = threading.Event()  # set on stop, so stalled handlers end at once
        self._server = _Server(("127.0.0.1", 0), PeerHandler)
        self._server.peer = self
        self._scheme = "https" if tls is not None else "http"
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, name=type(self).__name__,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"{self._scheme}://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        self.release()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def handle(self, method: str, path: str, query: str, headers: Any,
               body: bytes) -> tuple[int, Any] | tuple[int, Any, dict[str, str]]:
        raise NotImplementedError

    def throttled(self, status: int) -> Any:
        """The body the real server sends with a 429 or 503 answer."""
        raise NotImplementedError

    def throttle(self, status: int, times: int, retry_after: str | None = None) -> None:
        """Answer the next ``times`` requests with ``status`` (429 or 503), unprocessed."""
        with self.lock:
            self._throttles.extend([(status, retry_after)] * times)

    def next_throttle(self) -> tuple[int, str | None] | None:
        with self.lock:
            return self._throttles.pop(0) if self._throttles else None

    def hold(self) -> None:
        """Keep every request waiting (at most 10 s) until ``release``."""
        self.held = threading.Event()

    def release(self) -> None:
        if self.held is not None:
            self.held.set()

    def wait_in_flight(self, count: int, timeout: float = 10) -> bool:
        """Whether ``count`` requests were being answered at once within ``timeout`` seconds."""
        with self.arrived:
            return self.arrived.wait_for(lambda: self.in_flight >= count, timeout)
