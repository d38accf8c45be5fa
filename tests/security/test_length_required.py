"""A body the server cannot delimit is refused, never run as an empty body (issue 25, point 4's
last finding): an HTTP/1.0 ``POST /sync`` carrying ``{"dry_run": true}`` without Content-Length
was served with no body, so it became a real sync. It is now 411 with the error body; an
HTTP/1.1 request with no body at all is served as before."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.factories import TEST_KEY, Project, definition, file_secret
from tests.processes.live import API_KEY, LiveServer, server_env, write_definition

ERROR_KEYS = {"error", "detail", "timestamp"}


@pytest.fixture
def synced_nothing(project: Project, api_key: str, db: None) -> Project:
    return project.write(definition(file_secret("db", "out/app.env")))


def post_without_length(protocol: str, method: str = "POST") -> Any:
    """A test client request shaped like a server's environ for a request with no length header."""
    return Client(SERVER_PROTOCOL=protocol, HTTP_X_API_KEY=TEST_KEY).generic(method, "/sync", b"",
                                                                         CONTENT_TYPE="application/json")


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_an_http_1_0_body_without_content_length_is_411(synced_nothing: Project, method: str) -> None:
    response = post_without_length("HTTP/1.0", method)
    assert response.status_code == 411
    assert set(response.json()) == ERROR_KEYS
    assert "Content-Length" in response.json()["detail"]
    assert not synced_nothing.lockfile.exists()


def test_an_http_1_1_post_with_no_body_still_runs(synced_nothing: Project) -> None:
    response = post_without_length("HTTP/1.1")
    assert response.status_code == 200, response.content
    assert synced_nothing.lockfile.exists()


def test_an_http_1_0_get_needs_no_length(synced_nothing: Project) -> None:
    response = Client(SERVER_PROTOCOL="HTTP/1.0", HTTP_X_API_KEY=TEST_KEY).get("/secrets")
    assert response.status_code == 200


def exchange(server: LiveServer, data: bytes) -> tuple[int, bytes]:
    """Bytes in, then the write side closed (an HTTP/1.0 body ends with the connection)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@pytest.mark.slow
def test_a_served_http_1_0_dry_run_without_length_is_411_and_writes_nothing(
    tmp_path: Path, servers: Callable[..., LiveServer]
) -> None:
    config = write_definition(tmp_path, definition(file_secret("db", "out/app.env")))
    server = servers(server_env(data_dir=tmp_path / "data", config=config), tmp_path / "serve.log")
    request = (b"POST /sync HTTP/1.0\r\nHost: localhost\r\nX-API-Key: " + API_KEY.encode()
               + b"\r\nContent-Type: application/json\r\n\r\n" + b'{"dry_run": true}')
    status, body = exchange(server, request)
    assert status == 411
    assert set(json.loads(body)) == ERROR_KEYS
    assert not (tmp_path / ".gitsecrets.lock").exists(), "the dry run became a real sync"
    assert not (tmp_path / "out").exists()
