"""The remote mode's transport, against a recording HTTP server: the paths it forms (projects
included), the key it sends and never shows, TLS verification, a job followed to its end, and
how each failure (the server's error body, no answer) is printed and exits."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import certifi
import pytest
from click.testing import Result

from secretsapi.cli import auditrows, handover, progress
from secretsapi.cli.remote import client
from secretsapi.cli.remote.address import Remote
from tests.cli.remote.conftest import invoke
from tests.cli.remote.recorder import Recorder, recording, self_signed

pytestmark = pytest.mark.server

KEY = "remote-test-key-93c1f0"
NO_DRIFT = {"has_drift": False, "secrets_with_drift": [], "details": []}
CHECKED = {"secrets_checked": 0, "secrets_due": [], "secrets_overdue": [], "results": []}
STATUS = {"name": "db", "exists": False}


@pytest.fixture(autouse=True)
def _client_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SECRETSCTL_API_KEY", KEY)
    for name in ("SECRETSCTL_ADDR", "SECRETSCTL_PROJECT", "SECRETSCTL_CA_BUNDLE", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(client, "sleep", lambda seconds: None)


@pytest.fixture
def server() -> Iterator[Recorder]:
    with recording() as recorder:
        yield recorder


def run(server: Recorder, *args: str) -> Result:
    return invoke("--addr", server.url, *args)


# -- paths ---------------------------------------------------------------------------------------


def test_project_prefixes_every_path(server: Recorder) -> None:
    server.answer("POST", "/projects/team-a/rotation/check", (200, CHECKED))
    server.answer("GET", "/projects/team-a/secrets/db/status", (200, STATUS))
    server.answer("GET", "/projects/team-a/secrets", (200, {"secrets": [{"name": "db"}], "count": 1}))
    run(server, "--project", "team-a", "status", "-s", "db")
    assert server.paths() == ["POST /projects/team-a/rotation/check", "GET /projects/team-a/secrets/db/status",
                              "GET /projects/team-a/secrets"]


def test_the_project_comes_from_secretsctl_project_too(server: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRETSCTL_PROJECT", "billing")
    server.answer("POST", "/projects/billing/drift/check", (200, NO_DRIFT))
    assert run(server, "drift").exit_code == 0
    assert server.paths() == ["POST /projects/billing/drift/check"]


def test_a_project_name_is_one_path_segment(server: Recorder) -> None:
    run(server, "--project", "a/../b", "drift")
    assert server.paths() == ["POST /projects/a%2F..%2Fb/drift/check"]


def test_without_a_project_the_spec_paths_are_used(server: Recorder) -> None:
    server.answer("POST", "/drift/check", (200, NO_DRIFT))
    assert run(server, "drift").exit_code == 0 and server.paths() == ["POST /drift/check"]


def test_flags_become_the_request_body(server: Recorder) -> None:
    server.answer("POST", "/drift/check", (200, NO_DRIFT))
    run(server, "drift", "db", "-e", "prod", "-v", "extra.yml")
    assert server.sent[0].body == {"var_files": ["extra.yml"], "environment": "prod", "secret_name": "db"}


# -- the key -------------------------------------------------------------------------------------


def test_the_key_goes_in_the_x_api_key_header(server: Recorder) -> None:
    server.answer("POST", "/drift/check", (200, NO_DRIFT))
    run(server, "drift")
    assert server.sent[0].headers["X-API-Key"] == KEY and KEY not in server.sent[0].path


def test_a_refused_key_is_the_servers_error_and_never_shown(server: Recorder) -> None:
    server.answer("POST", "/drift/check", (401, {"error": "Unauthorized", "detail": "Invalid API key.",
                                                 "timestamp": "2026-01-01T00:00:00Z"}))
    result = run(server, "drift")
    assert (result.exit_code, result.stderr) == (1, "Error: Invalid API key.\n")
    assert KEY not in result.stdout + result.stderr


def test_there_is_no_key_option_on_the_command_line(server: Recorder) -> None:
    result = invoke("--addr", server.url, "--api-key", KEY, "drift")
    assert result.exit_code == 1 and "No such option" in result.stderr and server.sent == []


# -- errors --------------------------------------------------------------------------------------


def test_the_servers_error_body_is_printed_as_json_under_json(server: Recorder) -> None:
    server.answer("POST", "/drift/check", (403, {"error": "Forbidden", "timestamp": "2026-01-01T00:00:00Z",
                                                 "detail": "This API key does not have the 'read' scope."}))
    result = run(server, "drift", "--json")
    assert (result.exit_code, json.loads(result.stdout)) == (
        1, {"error": "Forbidden", "detail": "This API key does not have the 'read' scope."})


def test_an_answer_without_the_error_body_still_fails_clearly(server: Recorder) -> None:
    server.answer("POST", "/drift/check", (502, b"<html>Bad gateway</html>"))
    result = run(server, "drift", "--json")
    assert (result.exit_code, json.loads(result.stdout)["error"]) == (1, "HTTP 502")


def test_a_refused_connection_is_exit_3(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        result = invoke("--addr", f"http://127.0.0.1:{port}", "status")
    assert result.exit_code == 3 and "cannot connect to" in result.stderr


def test_an_address_that_is_not_http_is_a_usage_error() -> None:
    result = invoke("--addr", "ftp://example.com", "status")
    assert result.exit_code == 1 and "http:// or https://" in result.stderr


def test_an_address_with_credentials_is_refused() -> None:
    result = invoke("--addr", "https://user:pw@example.com", "status")
    assert result.exit_code == 1 and "SECRETSCTL_API_KEY" in result.stderr


# -- jobs ----------------------------------------------------------------------------------------


def job(state: str, status: int | None = None, result: object = None, done: int = 0) -> dict[str, object]:
    return {"id": "j1", "operation": "check_drift", "state": state, "progress": {"done": done, "total": 2},
            "status": status, "result": result}


def test_an_operation_answered_202_is_followed_to_its_result(server: Recorder) -> None:
    server.answer("POST", "/drift/check", (202, job("queued")))
    server.answer("GET", "/jobs/j1", (200, job("running", done=1)), (200, job("succeeded", 200, NO_DRIFT, 2)))
    result = run(server, "drift")
    assert (result.exit_code, result.stdout) == (0, "No drift.\n")
    assert server.paths() == ["POST /drift/check", "GET /jobs/j1", "GET /jobs/j1"]


def test_a_job_that_failed_is_its_error(server: Recorder) -> None:
    failure = {"error": "Not found", "detail": "Secret 'x' is not defined.", "timestamp": "2026-01-01T00:00:00Z"}
    server.answer("POST", "/drift/check", (202, job("queued")))
    server.answer("GET", "/jobs/j1", (200, job("failed", 404, failure)))
    result = run(server, "drift", "x")
    assert (result.exit_code, result.stderr) == (1, "Error: Secret 'x' is not defined.\n")


def test_on_a_terminal_the_job_is_asked_for_at_once_and_its_progress_drawn(
        server: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    readings = iter([0.0, 5.0, 5.0, 5.0, 5.0, 5.0])
    monkeypatch.setattr(progress, "clock", lambda: next(readings, 5.0))
    server.answer("POST", "/drift/check", (202, job("queued")))
    server.answer("GET", "/jobs/j1", (200, job("running", done=1)), (200, job("succeeded", 200, NO_DRIFT, 2)))
    result = run(server, "drift")
    assert server.sent[0].body["async"] is True
    assert "drift" in result.stderr and result.stdout == "No drift.\n"


def test_piped_output_waits_for_the_answer_without_async(server: Recorder) -> None:
    server.answer("POST", "/drift/check", (200, NO_DRIFT))
    run(server, "drift")
    assert "async" not in server.sent[0].body


def test_a_job_running_past_the_bound_stops_the_wait_and_names_the_job(
        server: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(client.JOB_TIMEOUT_ENV, "0")
    server.answer("POST", "/drift/check", (202, job("queued")))
    server.answer("GET", "/jobs/j1", (200, job("running")))
    result = run(server, "drift")
    assert result.exit_code == 3 and "/jobs/j1" in result.stderr


# -- TLS -----------------------------------------------------------------------------------------


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[Recorder, Path]]:
    cert, key = self_signed(tmp_path)
    with recording(tls=(cert, key)) as recorder:
        recorder.answer("POST", "/drift/check", (200, NO_DRIFT))
        yield recorder, cert


def test_tls_is_verified_by_default(tls_server: tuple[Recorder, Path]) -> None:
    server, _ = tls_server
    result = run(server, "drift")
    assert result.exit_code == 3 and "TLS verification failed" in result.stderr and "--ca-bundle" in result.stderr
    assert server.sent == []


def test_ca_bundle_names_the_ca_to_trust(tls_server: tuple[Recorder, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    server, cert = tls_server
    # requests lets this variable override a session's CA bundle: the option must still win.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", certifi.where())
    result = invoke("--addr", server.url, "--ca-bundle", str(cert), "drift")
    assert (result.exit_code, result.stdout) == (0, "No drift.\n")


def test_secretsctl_ca_bundle_names_it_too(tls_server: tuple[Recorder, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    server, cert = tls_server
    monkeypatch.setenv("SECRETSCTL_CA_BUNDLE", str(cert))
    assert run(server, "drift").exit_code == 0


def test_a_ca_bundle_that_is_not_a_file_is_refused(server: Recorder, tmp_path: Path) -> None:
    result = invoke("--addr", server.url, "--ca-bundle", str(tmp_path / "missing.pem"), "drift")
    assert result.exit_code == 1 and "not a readable file" in result.stderr and server.sent == []


def test_plain_http_to_another_host_is_warned_about(capsys: pytest.CaptureFixture[str]) -> None:
    handover.warn_plain_http(Remote("http://secrets.example.com"))
    assert "unencrypted" in capsys.readouterr().err


@pytest.mark.parametrize("addr", ["http://127.0.0.1:8000", "http://localhost", "http://[::1]:80",
                                  "https://secrets.example.com"])
def test_loopback_or_https_is_not_warned_about(addr: str, capsys: pytest.CaptureFixture[str]) -> None:
    handover.warn_plain_http(Remote(addr))
    assert capsys.readouterr().err == ""


# -- audit --follow ------------------------------------------------------------------------------


def row(at: str, action: str) -> dict[str, object]:
    return {"timestamp": at, "action": action, "resource": "secrets", "user": "ci", "details": {}, "success": True,
            "outcome": "ok", "project": None, "definition": "/srv/Secretfile.yml", "environment": None,
            "origin": None}


def test_follow_prints_the_last_rows_oldest_first_then_only_new_ones(server: Recorder,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    first = [row("2026-01-01T00:00:02Z", "rotate"), row("2026-01-01T00:00:01Z", "sync")]
    server.answer("GET", "/audit/logs", (200, {"entries": first}),
                  (200, {"entries": [row("2026-01-01T00:00:03Z", "drift"), *first]}))
    looks = iter([None])

    def interval(seconds: float) -> None:
        if next(looks, "stop") == "stop":
            raise KeyboardInterrupt  # Ctrl-C during the second wait

    @contextlib.contextmanager
    def waits() -> Iterator[Callable[[float], None]]:
        yield interval

    monkeypatch.setattr(auditrows, "until_ctrl_c", waits)
    result = run(server, "audit", "--follow", "--json", "-n", "2", "-a", "sync")
    assert [json.loads(line)["action"] for line in result.stdout.splitlines()] == ["sync", "rotate", "drift"]
    assert server.sent[0].query == {"limit": ["2"], "offset": ["0"], "action": ["sync"]}
    assert result.exit_code == 130


# -- statuses ---------------------------------------------------------------------------------------


def test_every_secrets_status_is_one_request_printed_in_definition_order(server: Recorder) -> None:
    names = [f"s{i:02d}" for i in range(20)]
    server.answer("POST", "/rotation/check", (200, CHECKED))
    server.answer("GET", "/status", (200, {"secrets": [{"name": n, "exists": False} for n in names],
                                           "count": len(names)}))
    result = run(server, "status", "--json")
    assert [st["name"] for st in json.loads(result.stdout)] == names and result.exit_code == 2
    assert not [sent for sent in server.paths() if sent.startswith("GET /secrets/")]


def test_the_secrets_named_are_read_concurrently_and_printed_in_the_order_named(server: Recorder) -> None:
    names = [f"s{i:02d}" for i in range(20)]
    server.answer("POST", "/rotation/check", (200, CHECKED))
    for name in names:
        server.answer("GET", f"/secrets/{name}/status", (200, {"name": name, "exists": False}))
    server.answer("GET", "/secrets", (200, {"secrets": [{"name": n} for n in names], "count": len(names)}))
    result = run(server, "status", *[arg for name in reversed(names) for arg in ("-s", name)], "--json")
    assert [st["name"] for st in json.loads(result.stdout)] == list(reversed(names)), result.stderr


def test_a_read_that_fails_fails_the_status(server: Recorder) -> None:
    server.answer("POST", "/rotation/check", (200, CHECKED))
    server.answer("GET", "/status", (500, {"error": "Internal server error", "detail": "boom"}))
    result = run(server, "status")
    assert (result.exit_code, result.stderr) == (1, "Error: boom\n")
