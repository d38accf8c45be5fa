"""Issue 18, point 2: insecure mode (no key) serves one developer's machine, not every web page
their browser opens: no foreign Host (DNS rebinding), no write from a foreign page (the
empty-body POST needs no preflight), no CORS grant beyond loopback, no listening beyond it."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.processes.live import (
    ROOT,
    LiveServer,
    free_port,
    many_secrets,
    server_env,
    start_server,
    write_definition,
)

pytestmark = pytest.mark.slow

ERROR_KEYS = {"error", "detail", "timestamp"}
FOREIGN = "https://evil.example"


def send(server: LiveServer, method: str, path: str, headers: dict[str, str],
         body: bytes | None = None) -> tuple[int, http.client.HTTPResponse, bytes]:
    """Exactly these headers (Host included when given) and body; nothing added but Content-Length."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.putrequest(method, path, skip_host="Host" in headers, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        if body is not None or method in {"POST", "PUT", "PATCH"}:
            conn.putheader("Content-Length", str(len(body or b"")))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response, response.read()
    finally:
        conn.close()


def preflight(server: LiveServer, origin: str) -> http.client.HTTPResponse:
    _, response, _ = send(server, "OPTIONS", "/sync", {
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type"})
    return response


def snapshot(root: Path) -> dict[str, bytes]:
    """Every target and the lockfile, byte for byte."""
    files = [*sorted((root / "out").glob("*")), root / ".gitsecrets.lock"]
    return {path.name: path.read_bytes() for path in files}


@pytest.fixture(scope="module")
def insecure_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Path]]:
    """No key at all, one sync done from this machine (so there are values a page could destroy)."""
    root = tmp_path_factory.mktemp("insecure")
    config = write_definition(root, many_secrets(3, 1))
    server = start_server(server_env(data_dir=root / "data", config=config, api_key=None), root / "serve.log")
    server.headers = {}
    try:
        status, _ = server.call("POST", "/sync", {})
        assert status == 200 and (root / ".gitsecrets.lock").exists()
        yield server, root
    finally:
        server.kill()


def test_a_preflight_from_a_foreign_origin_is_not_granted(insecure_server: tuple[LiveServer, Path]) -> None:
    server, _ = insecure_server
    assert preflight(server, FOREIGN).getheader("Access-Control-Allow-Origin") is None


def test_the_null_origin_is_not_granted(insecure_server: tuple[LiveServer, Path]) -> None:
    server, _ = insecure_server
    assert preflight(server, "null").getheader("Access-Control-Allow-Origin") is None


def test_a_foreign_page_cannot_read_an_answer(insecure_server: tuple[LiveServer, Path]) -> None:
    server, _ = insecure_server
    status, response, _ = send(server, "GET", "/secrets", {"Origin": FOREIGN})
    assert status == 200  # the browser sends it; without the grant the page reads nothing
    assert response.getheader("Access-Control-Allow-Origin") is None


@pytest.mark.parametrize("origin", ["http://localhost:3000", "http://127.0.0.1:5173", "https://[::1]", "http://LOCALHOST"])
def test_a_loopback_origin_is_granted(insecure_server: tuple[LiveServer, Path], origin: str) -> None:
    server, _ = insecure_server
    response = preflight(server, origin)
    assert response.getheader("Access-Control-Allow-Origin") == origin
    assert response.getheader("Access-Control-Allow-Credentials") == "true"


def test_an_empty_post_from_a_foreign_page_is_refused_and_syncs_nothing(
    insecure_server: tuple[LiveServer, Path],
) -> None:
    server, root = insecure_server
    before = snapshot(root)
    # What a page's `fetch(url, {method: "POST", mode: "no-cors"})` sends: no preflight.
    status, _, body = send(server, "POST", "/sync", {"Origin": FOREIGN})
    assert status == 403
    assert set(json.loads(body)) == ERROR_KEYS and "SERVICE_API_KEY" in json.loads(body)["detail"]
    assert snapshot(root) == before


def test_a_forced_sync_from_a_foreign_page_is_refused_and_changes_nothing(
    insecure_server: tuple[LiveServer, Path],
) -> None:
    server, root = insecure_server
    before = snapshot(root)
    # What the page sends once a preflight is granted (as every origin's was before).
    status, _, body = send(server, "POST", "/sync", {"Origin": FOREIGN, "Content-Type": "application/json"},
                           b'{"force": true}')
    assert status == 403 and set(json.loads(body)) == ERROR_KEYS
    assert snapshot(root) == before


def test_a_write_from_a_null_origin_is_refused(insecure_server: tuple[LiveServer, Path]) -> None:
    server, root = insecure_server
    before = snapshot(root)
    status, _, _ = send(server, "POST", "/sync", {"Origin": "null"})
    assert status == 403
    assert snapshot(root) == before


def test_a_write_from_a_loopback_page_is_served(insecure_server: tuple[LiveServer, Path]) -> None:
    server, _ = insecure_server
    status, _, _ = send(server, "POST", "/sync", {"Origin": "http://localhost:3000",
                                                  "Content-Type": "application/json"}, b'{"dry_run": true}')
    assert status == 200


def test_a_foreign_host_name_gets_the_error_body(insecure_server: tuple[LiveServer, Path]) -> None:
    """DNS rebinding: the page's own name resolves to 127.0.0.1, so its requests carry that Host."""
    server, _ = insecure_server
    status, response, body = send(server, "GET", "/secrets", {"Host": f"evil.example:{server.port}"})
    assert status == 400
    assert response.getheader("Content-Type") == "application/json"
    assert set(json.loads(body)) == ERROR_KEYS and "localhost" in json.loads(body)["detail"]


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_loopback_host_names_are_served(insecure_server: tuple[LiveServer, Path], host: str) -> None:
    server, _ = insecure_server
    status, _, _ = send(server, "GET", "/secrets", {"Host": f"{host}:{server.port}"})
    assert status == 200


def test_serve_refuses_a_non_loopback_address_without_a_key(tmp_path: Path) -> None:
    # 192.0.2.1 (TEST-NET-1) is no interface of this machine: nothing is ever bound outside loopback.
    env = server_env(data_dir=tmp_path / "data", config=tmp_path / "Secretfile.yml", api_key=None)
    done = subprocess.run([sys.executable, "manage.py", "serve", "--host", "192.0.2.1", "--port", str(free_port())],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "insecure mode" in lines[0] and "SERVICE_API_KEY" in lines[0], done.stderr


def test_a_key_created_while_serving_ends_insecure_mode(
    tmp_path: Path, servers: Callable[..., LiveServer],
) -> None:
    config = write_definition(tmp_path, many_secrets(1, 1))
    env = server_env(data_dir=tmp_path / "data", config=config, api_key=None)
    server = servers(env, tmp_path / "serve.log")
    assert send(server, "GET", "/secrets", {"Host": "evil.example"})[0] == 400
    subprocess.run([sys.executable, "manage.py", "apikey", "create", "ci", "--scope", "read"],
                   cwd=ROOT, env=env, capture_output=True, timeout=120, check=True)
    # A keyed server answers any name: this one now asks for the key.
    assert send(server, "GET", "/secrets", {"Host": "evil.example"})[0] == 401
