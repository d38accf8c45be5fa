"""A webhook receiver on loopback: records each POST (headers and body) and answers a chosen status.

Covers what a delivery needs from an endpoint: one POST per attempt, answered with a status (a
3xx with a Location, to show redirects are not followed). Does not cover TLS, slow or partial
answers, or keep-alive behaviour.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    statuses: list[int] = field(default_factory=list)  # answered in turn; 204 once they run out
    received: list[Received] = field(default_factory=list)


@contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    receiver = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            receiver.received.append(Received(self.path, dict(self.headers.items()), body))
            status = receiver.statuses.pop(0) if receiver.statuses else 204
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", receiver.url + "elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook/"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
