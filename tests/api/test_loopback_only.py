"""Insecure mode's loopback rules in process: what counts as this machine, and the peer rule
(a real server listens on loopback only, so no foreign peer can reach it in tests/security)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from secretsapi.api.loopback import is_loopback_address, is_loopback_host, is_loopback_origin
from tests.factories import LOCAL_HOST


@pytest.mark.parametrize("host", ["localhost", "LocalHost:8000", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:8000"])
def test_loopback_host_names(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["evil.example", "localhost.evil.example", "127.0.0.1.nip.io", "127.0.0.2",
                                  "0.0.0.0", "[::]", "localhost:8000\n", "", "::1"])  # noqa: S104 - never bound
def test_other_host_names(host: str) -> None:
    assert not is_loopback_host(host)


@pytest.mark.parametrize("origin", ["http://localhost", "https://localhost:3000", "http://127.0.0.1:5173",
                                    "http://[::1]:8080"])
def test_loopback_origins(origin: str) -> None:
    assert is_loopback_origin(origin)


@pytest.mark.parametrize("origin", ["null", "https://evil.example", "http://localhost.evil.example",
                                    "file://", "http://localhost/", "chrome-extension://abc", "ws://localhost"])
def test_other_origins(origin: str) -> None:
    assert not is_loopback_origin(origin)


@pytest.mark.parametrize(("address", "local"), [
    ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("::ffff:127.0.0.1", True), ("0.0.0.0", False), ("::", False), ("192.168.1.5", False),  # noqa: S104
    ("myhost.internal", False), ("", False),
])
def test_listening_addresses(address: str, local: bool) -> None:
    assert is_loopback_address(address) is local


def test_insecure_mode_refuses_a_peer_of_another_machine(db: None, insecure: None) -> None:
    response = APIClient(HTTP_HOST=LOCAL_HOST, REMOTE_ADDR="192.0.2.7").get("/secrets")
    assert response.status_code == 403 and "this machine" in response.json()["detail"]


def test_with_a_key_a_peer_of_another_machine_is_asked_for_it(db: None, api_key: str) -> None:
    assert APIClient(HTTP_HOST="secrets.internal", REMOTE_ADDR="192.0.2.7").get("/secrets").status_code == 401


def test_a_request_without_a_host_header_is_named_by_the_address_it_reached(db: None, insecure: None) -> None:
    assert APIClient(SERVER_NAME="127.0.0.1").get("/health").status_code == 200
    assert APIClient(SERVER_NAME="evil.example").get("/health").status_code == 400


def test_behind_the_proxy_insecure_mode_refuses_the_client_the_proxy_forwards(
    db: None, insecure: None, settings: Any
) -> None:
    settings.SERVICE_BEHIND_PROXY = True
    client = APIClient(HTTP_HOST=LOCAL_HOST, REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="192.0.2.7")
    response = client.get("/audit/logs")
    assert response.status_code == 403 and "this machine" in response.json()["detail"]


def test_behind_the_proxy_insecure_mode_serves_a_client_on_this_machine(
    db: None, insecure: None, settings: Any
) -> None:
    settings.SERVICE_BEHIND_PROXY = True
    client = APIClient(HTTP_HOST=LOCAL_HOST, REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="127.0.0.1")
    assert client.get("/audit/logs").status_code == 200
