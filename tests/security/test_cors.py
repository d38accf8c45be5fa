"""Issue 18, points 2 and 11: with a key, CORS is the spec's default (every origin, method and
requested header, with credentials) unless SERVICE_CORS_ORIGINS restricts it; the admin, whose
session is a cookie, is never granted to another origin."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes.live import API_KEY, LiveServer, many_secrets, server_env, start_server, write_definition

pytestmark = pytest.mark.slow

FOREIGN = "https://dashboard.example"


def send(server: LiveServer, method: str, path: str, headers: dict[str, str],
         body: bytes | None = None) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        return response
    finally:
        conn.close()


def preflight(server: LiveServer, origin: str, requested: str = "x-api-key") -> http.client.HTTPResponse:
    return send(server, "OPTIONS", "/sync", {
        "Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": requested})


def keyed(root: Path, **extra: str) -> LiveServer:
    config = write_definition(root, many_secrets(2, 1))
    return start_server(server_env(data_dir=root / "data", config=config, extra=extra), root / "serve.log")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    started = keyed(tmp_path_factory.mktemp("keyed"))
    try:
        yield started
    finally:
        started.kill()


@pytest.fixture(scope="module")
def restricted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    started = keyed(tmp_path_factory.mktemp("restricted"), SERVICE_CORS_ORIGINS="https://ok.example")
    try:
        yield started
    finally:
        started.kill()


def test_a_foreign_origin_is_granted_with_credentials(server: LiveServer) -> None:
    response = preflight(server, FOREIGN)
    assert response.getheader("Access-Control-Allow-Origin") == FOREIGN
    assert response.getheader("Access-Control-Allow-Credentials") == "true"


def test_every_requested_header_is_granted(server: LiveServer) -> None:
    response = preflight(server, FOREIGN, "x-api-key, content-type, x-trace-id")
    granted = {name.strip() for name in (response.getheader("Access-Control-Allow-Headers") or "").split(",")}
    assert {"x-api-key", "content-type", "x-trace-id"} <= granted


def test_a_requested_header_list_that_is_not_header_names_is_not_echoed(server: LiveServer) -> None:
    response = preflight(server, FOREIGN, "x-trace-id, <script>")
    assert "<script>" not in (response.getheader("Access-Control-Allow-Headers") or "")


def test_a_write_from_a_foreign_page_with_the_key_is_served(server: LiveServer) -> None:
    response = send(server, "POST", "/sync", {"Origin": FOREIGN, "X-API-Key": API_KEY,
                                              "Content-Type": "application/json"}, b'{"dry_run": true}')
    assert response.status == 200
    assert response.getheader("Access-Control-Allow-Origin") == FOREIGN


def test_a_foreign_host_name_is_served_with_a_key(server: LiveServer) -> None:
    response = send(server, "GET", "/secrets", {"Host": "secrets.internal", "X-API-Key": API_KEY})
    assert response.status == 200


def test_the_admin_is_not_granted_to_other_origins(server: LiveServer) -> None:
    response = send(server, "GET", "/admin/login/", {"Origin": FOREIGN})
    assert response.status == 200
    assert response.getheader("Access-Control-Allow-Origin") is None


def test_cors_origins_grant_a_listed_origin(restricted: LiveServer) -> None:
    assert preflight(restricted, "https://ok.example").getheader("Access-Control-Allow-Origin") == "https://ok.example"


def test_cors_origins_refuse_every_other_origin(restricted: LiveServer) -> None:
    assert preflight(restricted, FOREIGN).getheader("Access-Control-Allow-Origin") is None
