"""A recording HTTP server for the client's tests: answers each request from a script (method and
path -> a queue of status, body), records what it was sent (path, query, headers, body), and
serves TLS with a throwaway self-signed certificate when asked."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Sent:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Recorder:
    url: str
    script: dict[tuple[str, str], list[tuple[int, Any]]] = field(default_factory=dict)
    sent: list[Sent] = field(default_factory=list)

    def answer(self, method: str, path: str, *answers: tuple[int, Any]) -> None:
        self.script.setdefault((method, path), []).extend(answers)

    def paths(self) -> list[str]:
        return [f"{s.method} {s.path}" for s in self.sent]


def _handler(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            recorder.sent.append(Sent(self.command, parts.path, parse_qs(parts.query), dict(self.headers),
                                      json.loads(raw) if raw else None))
            queue = recorder.script.get((self.command, parts.path)) or []
            status, body = queue.pop(0) if len(queue) > 1 else (queue[0] if queue else (404, {
                "error": "Not found", "detail": "Not found.", "timestamp": "2026-01-01T00:00:00Z"}))
            payload = json.dumps(body).encode() if not isinstance(body, bytes) else body
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _serve

    return Handler


@contextmanager
def recording(tls: tuple[Path, Path] | None = None) -> Iterator[Recorder]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(Recorder("")))
    recorder = Recorder(f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = _handler(recorder)
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(tls[0]), str(tls[1]))
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM files in ``folder``)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path
