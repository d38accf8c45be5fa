"""Hostile input and leaks against a real ``serve`` (gunicorn) process, its logs captured."""

from __future__ import annotations

import http.client
import json
import select
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.processes.live import (
    API_KEY,
    LiveServer,
    many_secrets,
    read_targets,
    server_env,
    sqlite_rows,
    write_definition,
)

pytestmark = pytest.mark.slow

ERROR_KEYS = {"error", "detail", "timestamp"}


def raw_request(server: LiveServer, method: str, path: str, chunks: list[bytes],
                headers: dict[str, str]) -> tuple[int, bytes]:
    """Send exactly these header lines and body bytes (no client-side help)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.putrequest(method, path)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.endheaders()
        for chunk in chunks:
            # A server may answer before reading the body (411 for a chunked one) and close: stop
            # sending once its answer is there, as a client would, instead of writing into a
            # closed connection (a broken pipe, under load, before the answer is read).
            if select.select([conn.sock], [], [], 0)[0]:
                break
            try:
                conn.send(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def chunked(data: bytes, size: int = 4096) -> list[bytes]:
    parts = [data[i:i + size] for i in range(0, len(data), size)]
    return [b"%x\r\n%s\r\n" % (len(part), part) for part in parts] + [b"0\r\n\r\n"]


JSON_HEADERS = {"X-API-Key": API_KEY, "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def small_limit_server(tmp_path_factory: pytest.TempPathFactory,
                       module_servers: Callable[..., LiveServer]) -> LiveServer:
    """One server for the module's tests of refused bodies: none may write anything, and each
    asserts that nothing wrote the lockfile beside the server's definition (``project``)."""
    folder = tmp_path_factory.mktemp("small-limit")
    definition = write_definition(folder, many_secrets(3, files=1))
    env = server_env(data_dir=folder / "data", config=definition, extra={"SERVICE_MAX_BODY_BYTES": "2048"})
    return module_servers(env, folder / "serve.log")


def project(server: LiveServer) -> Path:
    """The folder of ``server``'s definition (its lockfile's)."""
    return server.log_path.parent


def test_a_body_above_the_limit_is_413_with_the_error_body_and_changes_nothing(small_limit_server: LiveServer) -> None:
    body = json.dumps({"force": True, "padding": "x" * 4096}).encode()
    status, data = raw_request(small_limit_server, "POST", "/sync", [body],
                               {**JSON_HEADERS, "Content-Length": str(len(body))})
    assert status == 413 and set(json.loads(data)) == ERROR_KEYS
    # A lying Content-Length (bigger than what is sent) is refused before anything is read.
    status, data = raw_request(small_limit_server, "POST", "/sync", [b"{}"],
                               {**JSON_HEADERS, "Content-Length": "999999999"})
    assert status == 413 and set(json.loads(data)) == ERROR_KEYS
    status, data = raw_request(small_limit_server, "POST", "/sync", [b"{}"],
                               {**JSON_HEADERS, "Content-Length": "abc"})
    assert status == 400
    assert not (project(small_limit_server) / ".gitsecrets.lock").exists()
    status, _ = small_limit_server.call("GET", "/health")
    assert status == 200


def test_a_chunked_body_without_content_length_is_refused_not_ignored(small_limit_server: LiveServer) -> None:
    headers = {**JSON_HEADERS, "Transfer-Encoding": "chunked"}
    status, data = raw_request(small_limit_server, "POST", "/sync", chunked(b'{"dry_run": true}'), headers)
    assert not (project(small_limit_server) / ".gitsecrets.lock").exists(), "a dry run wrote the lockfile"
    assert status in (400, 411, 413) and set(json.loads(data)) == ERROR_KEYS
    status, data = raw_request(small_limit_server, "POST", "/sync", chunked(b" " * 100_000 + b"{}"), headers)
    assert status in (400, 411, 413) and set(json.loads(data)) == ERROR_KEYS


def test_a_chunked_body_is_never_a_500(small_limit_server: LiveServer) -> None:
    headers = {**JSON_HEADERS, "Transfer-Encoding": "chunked"}
    for body in (b"{}", b"not json", b"x" * 200_000):
        status, data = raw_request(small_limit_server, "POST", "/config/validate", chunked(body), headers)
        assert status < 500, data
        if status >= 400:
            assert set(json.loads(data)) == ERROR_KEYS


def test_when_the_audit_table_cannot_be_written_a_sync_fails_loudly(
    tmp_path: Path, servers: Callable[..., LiveServer]
) -> None:
    definition = write_definition(tmp_path, many_secrets(3, files=1))
    server = servers(server_env(data_dir=tmp_path / "data", config=definition), tmp_path / "serve.log")
    assert server.call("POST", "/sync", {"secret_name": "s0"})[0] == 200
    with closing(sqlite3.connect(tmp_path / "data" / "service.sqlite3", timeout=30)) as db:
        db.execute("DROP TABLE audit_auditentry")
        db.commit()
    status, body = server.call("POST", "/sync", {"secret_name": "s1"})
    assert status == 500 and set(body) == ERROR_KEYS
    assert "audit_auditentry" not in body["detail"]
    assert "no such table: audit_auditentry" in server.log()


# --- leaks -----------------------------------------------------------------------------------

def test_a_full_workflow_against_a_real_server_leaks_no_value_anywhere_but_the_targets(
    tmp_path: Path, servers: Callable[..., LiveServer]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    document = many_secrets(12, files=4, kinds=("random_password", "random_string", "uuid", "random_hex"),
                            rotation_period="30d")
    document["policies"] = {"p": {"kind": "rotation", "require_rotation_period": True, "max_age": "60d"}}
    document["metadata"] = {"compliance": ["soc2"]}
    definition = write_definition(project, document)
    lockfile = project / ".gitsecrets.lock"
    env = server_env(data_dir=tmp_path / "data", config=definition)
    server = servers(env, tmp_path / "serve.log", workers=2, log_level="debug")
    seen: set[str] = set()
    responses: list[str] = []

    def step(method: str, path: str, body: Any = None, *, expect: int = 200, **kwargs: Any) -> Any:
        status, data = server.call(method, path, body, **kwargs)
        assert status == expect, (path, status, data)
        responses.append(json.dumps(data))
        seen.update(read_targets(project).values())
        return data

    step("POST", "/sync", {})
    step("GET", "/secrets")
    step("GET", "/secrets/s0/status")
    step("GET", "/secrets/s0", expect=403)  # value reads are off by default
    step("POST", "/sync", {"force": True})
    step("POST", "/sync", {"dry_run": True, "force": True})
    step("POST", "/sync", {"secret_name": "s1", "force": True})
    step("POST", "/agent/sync", {"force": True})
    step("POST", "/rotation/check", {})
    data = json.loads(lockfile.read_text())
    data["secrets"]["s0"]["created_at"] = data["secrets"]["s0"]["updated_at"] = "2000-01-01T00:00:00+00:00"
    lockfile.write_text(json.dumps(data))
    step("POST", "/rotation/execute", {})
    step("POST", "/rotation/execute", {"force": True})
    step("POST", "/rotation/execute", {"secret_name": "s2", "force": True})
    step("POST", "/policy/check", {"fail_on_warning": True})
    step("POST", "/policy", {})
    target = project / "out" / "f1.json"
    edited = json.loads(target.read_text())
    edited["s1"] = "edited-by-hand"
    target.write_text(json.dumps(edited))
    step("POST", "/drift/check", {})
    step("POST", "/drift", {"secret_name": "s1"})
    step("POST", "/config/validate", {"config": {"version": "1", "secrets": [{"name": "x", "kind": "uuid"}]}})
    step("POST", "/config/render", {})
    step("POST", "/sync", {"secret_name": "missing"}, expect=404)
    step("POST", "/sync", {"force": "maybe"}, expect=422)
    step("POST", "/rotation/execute", {"secret_name": "nope", "force": True}, expect=404)
    status, raw = raw_request(server, "POST", "/sync", [b"{not json"], {**JSON_HEADERS, "Content-Length": "9"})
    assert status == 400
    responses.append(raw.decode())
    server.headers = {"X-API-Key": "wrong-key"}
    step("POST", "/sync", {}, expect=401)
    server.headers = {"X-API-Key": API_KEY}
    step("GET", "/audit/logs?limit=1000")
    server.stop()  # graceful: every log line is flushed

    assert len(seen - {"edited-by-hand"}) >= 12 * 4 + 3  # four full generations and three single ones
    database = tmp_path / "data" / "service.sqlite3"
    haystacks = {
        "lockfile": lockfile.read_text(),
        "audit rows": json.dumps(sqlite_rows(database, "SELECT * FROM audit_auditentry")),
        "database files": b"".join(p.read_bytes() for p in database.parent.glob("service.sqlite3*")).decode("latin-1"),
        "server output": server.log(),
        "responses": "\n".join(responses),
    }
    assert "DEBUG" in haystacks["server output"] or "debug" in haystacks["server output"].lower()
    for value in seen - {"edited-by-hand"}:
        for where, text in haystacks.items():
            assert value not in text, f"a generated value leaked into the {where}"
