"""Webhook deliveries go where the address check said, and nowhere the environment says (issue 36, point 9).

As the attacker ran it: IPv6 spellings of loopback and private IPv4 addresses passed the check;
a name that resolved to a public address for the check and to 127.0.0.1 for the connection
(DNS rebinding, TTL 0) reached a listener on the service's host; ``~/.netrc`` handed its
password to the endpoint and ``HTTP_PROXY`` sent every delivery (payload and signature) to a
listener of its own. Listeners on 127.0.0.1 stand in for the attacker's hosts.
"""

from __future__ import annotations

import datetime
import http.server
import io
import ipaddress
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from tests.factories import LOCAL_HOST
from tests.peers.webhook_receiver import webhook_receiver
from tests.webhooks.support import endpoint
from webhooks import delivery, outbox
from webhooks.addresses import AddressRefused, check
from webhooks.delivery import deliver_due
from webhooks.models import Delivery

REAL_GETADDRINFO = socket.getaddrinfo
PUBLIC = "93.184.215.14"


@pytest.mark.parametrize("host", ["[::7f00:1]", "[::ffff:0:7f00:1]", "[::a00:1]", "[::ffff:0:a9fe:a9fe]",
                                  "[::c0a8:1]", "[64:ff9b:1::a00:1]", "[::]", "[::ffff:0:0]"])
def test_an_ipv6_spelling_of_a_non_public_ipv4_address_is_refused(host: str, settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(AddressRefused, match="SERVICE_WEBHOOK_ALLOW_PRIVATE"):
        check(f"http://{host}:8080/hook")


@pytest.mark.parametrize("host", ["[::ffff:5db8:d70e]", "[64:ff9b::5db8:d70e]"])
def test_an_ipv6_spelling_of_a_public_ipv4_address_is_accepted(host: str, settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = False
    check(f"https://{host}/hook")


def _queue(url: str) -> Delivery:
    endpoint(url)
    outbox.enqueue([("sync.completed", {"generated": ["db"]})], actor="scheduler", audit_row=1)
    return Delivery.objects.get()


@contextmanager
def rebinding(monkeypatch: pytest.MonkeyPatch, name: str, answers: list[str]) -> Iterator[list[str]]:
    """``name`` answers each lookup with the next address of ``answers`` (the last one repeats), as a
    DNS server with a zero TTL does; every other name resolves as usual. Yields the lookups made."""
    asked: list[str] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != name:
            return REAL_GETADDRINFO(host, port, *args, **kwargs)
        asked.append(host)
        address = answers[min(len(asked), len(answers)) - 1]
        return REAL_GETADDRINFO(address, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield asked


@pytest.mark.server
def test_a_name_rebound_to_loopback_after_the_check_is_never_connected_to(
    db: None, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = False
    monkeypatch.setattr(delivery, "TIMEOUT_SECONDS", 0.5)  # the public address answers nothing here
    with webhook_receiver() as listener, rebinding(monkeypatch, "hooks.attacker.test", [PUBLIC, "127.0.0.1"]):
        port = listener.url.split(":")[2].split("/")[0]
        row = _queue(f"http://hooks.attacker.test:{port}/hook/")
        deliver_due()
        row.refresh_from_db()
        assert listener.received == []
    assert row.state == Delivery.PENDING and row.last_error.startswith("no answer")


@pytest.mark.server
def test_the_checked_address_is_the_one_connected_to(
    db: None, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two listeners on one port, at 127.0.0.1 and 127.0.0.2: the name resolves to the first for
    the check and to the second afterwards. Only the first may be reached."""
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True
    with _listener("127.0.0.1", 0) as first, _listener("127.0.0.2", first.port) as second, \
                rebinding(monkeypatch, "hooks.attacker.test", ["127.0.0.1", "127.0.0.2"]) as asked:
        row = _queue(f"http://hooks.attacker.test:{first.port}/hook?x=1")
        deliver_due()
    row.refresh_from_db()
    assert row.state == Delivery.DELIVERED
    assert len(first.requests) == 1 and second.requests == []
    assert len(asked) == 1  # one lookup, for the check
    request_line, headers = first.requests[0]
    assert request_line == "POST /hook?x=1 HTTP/1.1"
    assert headers["Host"] == f"hooks.attacker.test:{first.port}"


@pytest.mark.server
def test_an_https_endpoint_is_reached_at_the_checked_address_with_its_name_in_the_handshake(
    db: None, settings: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True
    context, ca = _tls_for("hooks.example.test", tmp_path)
    monkeypatch.setattr(delivery, "CA_BUNDLE", str(ca))
    with _listener("127.0.0.1", 0, tls=context) as server, \
            rebinding(monkeypatch, "hooks.example.test", ["127.0.0.1"]):
        row = _queue(f"https://hooks.example.test:{server.port}/hook")
        deliver_due()
    row.refresh_from_db()
    assert row.state == Delivery.DELIVERED, row.last_error
    assert server.server_names == ["hooks.example.test"]
    assert server.requests[0][1]["Host"] == f"hooks.example.test:{server.port}"


@pytest.mark.server
def test_a_certificate_for_another_name_is_refused(
    db: None, settings: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True
    context, ca = _tls_for("other.example.test", tmp_path)
    monkeypatch.setattr(delivery, "CA_BUNDLE", str(ca))
    with _listener("127.0.0.1", 0, tls=context) as server, \
            rebinding(monkeypatch, "hooks.example.test", ["127.0.0.1"]):
        row = _queue(f"https://hooks.example.test:{server.port}/hook")
        deliver_due()
    row.refresh_from_db()
    assert (row.state, row.last_error) == (Delivery.PENDING, "no answer: SSLError")
    assert server.requests == []


@pytest.mark.server
def test_netrc_credentials_never_reach_the_endpoint(
    db: None, settings: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True
    (tmp_path / ".netrc").write_text("machine 127.0.0.1 login operator password netrc-password-7f3\n")
    (tmp_path / ".netrc").chmod(0o600)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NETRC", str(tmp_path / ".netrc"))
    with webhook_receiver() as receiver:
        _queue(receiver.url)
        deliver_due()
    assert len(receiver.received) == 1
    assert "Authorization" not in receiver.received[0].headers


@pytest.mark.server
@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_a_proxy_from_the_environment_is_never_used(
    db: None, settings: Any, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    with webhook_receiver() as receiver, webhook_receiver() as proxy:
        monkeypatch.setenv(variable, proxy.url.rstrip("/").rsplit("/", 1)[0])
        row = _queue(receiver.url)
        deliver_due()
    row.refresh_from_db()
    assert proxy.received == []
    assert len(receiver.received) == 1 and row.state == Delivery.DELIVERED


TOKEN_URL = "https://hooks.example.com/services/hook?token=tok-9d2e1f&channel=ops"


def test_webhook_list_shows_the_url_with_its_query_values_redacted(db: None, settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True
    endpoint(TOKEN_URL)
    out = io.StringIO()
    call_command("webhook", "list", stdout=out)
    as_json = io.StringIO()
    call_command("webhook", "list", "--json", stdout=as_json)
    assert "tok-9d2e1f" not in out.getvalue() + as_json.getvalue()
    assert "https://hooks.example.com/services/hook?token=***&channel=***" in out.getvalue()
    assert json.loads(as_json.getvalue())[0]["url"] == "https://hooks.example.com/services/hook?token=***&channel=***"


@pytest.mark.parametrize("page", ["/admin/webhooks/endpoint/", "/admin/webhooks/endpoint/{endpoint}/change/",
                                  "/admin/webhooks/delivery/", "/admin/webhooks/delivery/{delivery}/change/"])
def test_the_admin_shows_the_url_with_its_query_values_redacted(db: None, page: str) -> None:
    row = _queue(TOKEN_URL)
    client = Client(HTTP_HOST=LOCAL_HOST)
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-for-tests"))
    response = client.get(page.format(endpoint=row.endpoint_id, delivery=row.pk))
    assert response.status_code == 200
    assert b"tok-9d2e1f" not in response.content
    assert b"token=***" in response.content


# -- helpers: an HTTP(S) listener that records request lines, headers and the TLS server name


class _Listener:
    def __init__(self, server: http.server.ThreadingHTTPServer) -> None:
        self.server = server
        self.port = int(server.server_address[1])
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.server_names: list[str | None] = []


@contextmanager
def _listener(host: str, port: int, *, tls: ssl.SSLContext | None = None) -> Iterator[_Listener]:
    holder: dict[str, _Listener] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            holder["it"].requests.append((self.requestline, dict(self.headers.items())))
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer((host, port), Handler)
    found = holder["it"] = _Listener(server)
    if tls is not None:
        tls.sni_callback = _recording(found.server_names)
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _recording(names: list[str | None]) -> Callable[[Any, str | None, Any], None]:
    def callback(sock: Any, name: str | None, context: Any) -> None:
        names.append(name)
    return callback


def _tls_for(name: str, folder: Path) -> tuple[ssl.SSLContext, Path]:
    """A certificate for ``name`` (DNS) signed by a throwaway CA: the server's context and the CA file."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test webhook CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(hours=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    ca_path, cert_path, key_path = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    assert ipaddress.ip_address("127.0.0.1")  # the listener's address is not in the certificate
    return context, ca_path
