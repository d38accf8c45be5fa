"""infisical/infisical through the engine against the Infisical test server: writes, read-back drift,
repair, credentials (token, Universal Auth, environment), throttling, concurrency and refusals."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import lock_entries, secret, sync_while_held, target, workspace
from tests.peers.infisical_server import InfisicalServer

WS = "ws-app"


def infisical_provider(server: InfisicalServer, **config: Any) -> dict[str, Any]:
    return {"kind": "infisical", "auth": {"kind": "token", "config": {"token": server.token}},
            "config": {"api_url": f"{server.url}/api", "workspace_id": WS, **config}}


def universal_provider(server: InfisicalServer, client_secret: str | None = None) -> dict[str, Any]:
    return {"kind": "infisical", "auth": {"kind": "universal_auth", "config": {
        "client_id": server.client_id, "client_secret": client_secret or server.client_secret}},
        "config": {"api_url": f"{server.url}/api", "workspace_id": WS}}


@pytest.fixture
def server(infisical: InfisicalServer) -> InfisicalServer:
    infisical.add_project(WS, folders=("/backend",))
    return infisical


def _workspace(tmp_path: Path, server: InfisicalServer) -> Workspace:
    return workspace(
        tmp_path, {"inf": infisical_provider(server)},
        secret("db_password", target("local", "file", path="out/app.env"),
               target("inf", "infisical", environment="prod", secret_path="/backend", secret_name="DB_PASSWORD")),
        secret("api_key", target("local", "file", path="out/app.env"), target("inf", "infisical")),
    )


def test_sync_creates_the_secrets_in_their_environment_and_folder_and_records_them(
    tmp_path: Path, server: InfisicalServer
) -> None:
    ws = _workspace(tmp_path, server)
    assert sync(ws).errors == []
    db, api = server.value(WS, "prod", "DB_PASSWORD", "/backend"), server.value(WS, "dev", "api_key")
    assert db and api
    lock = lock_entries(ws)
    # SecretZero's ids: `secret_path` and `secret_name` are not among the keys it takes one from.
    assert lock["db_password"]["targets"]["inf/infisical/"] == sha256_text(db)
    assert lock["api_key"]["targets"]["inf/infisical/"] == sha256_text(api)
    assert not detect_drift(ws).has_drift


def test_other_secrets_environments_and_folders_are_left_alone(tmp_path: Path, server: InfisicalServer) -> None:
    server.put(WS, "prod", "OTHER", "kept-value", "/backend")
    server.put(WS, "dev", "DB_PASSWORD", "dev-value", "/backend")
    server.put(WS, "prod", "DB_PASSWORD", "root-value")
    sync(_workspace(tmp_path, server))
    assert server.value(WS, "prod", "OTHER", "/backend") == "kept-value"
    assert server.value(WS, "dev", "DB_PASSWORD", "/backend") == "dev-value"
    assert server.value(WS, "prod", "DB_PASSWORD") == "root-value"


def test_an_existing_secret_is_updated_and_an_unchanged_one_is_not_written_again(
    tmp_path: Path, server: InfisicalServer
) -> None:
    server.put(WS, "prod", "DB_PASSWORD", "old-value", "/backend")
    ws = _workspace(tmp_path, server)
    assert sync(ws).errors == []
    assert server.value(WS, "prod", "DB_PASSWORD", "/backend") not in (None, "old-value")
    writes = server.writes
    assert sync(ws, force=True, secret_name="db_password").errors == []  # a new value: one PATCH
    assert server.writes == writes + 1
    assert sync(ws, repair=True).secrets_repaired == [] and server.writes == writes + 1


def test_a_rotation_updates_the_secret(tmp_path: Path, server: InfisicalServer) -> None:
    ws = _workspace(tmp_path, server)
    sync(ws)
    before = server.value(WS, "prod", "DB_PASSWORD", "/backend")
    assert execute_rotation(ws, force=True, secret_name="db_password").errors == []
    after = server.value(WS, "prod", "DB_PASSWORD", "/backend")
    assert after != before
    assert lock_entries(ws)["db_password"]["targets"]["inf/infisical/"] == sha256_text(after or "")


def test_drift_reads_the_values_back_and_repair_restores_them(tmp_path: Path, server: InfisicalServer) -> None:
    ws = _workspace(tmp_path, server)
    sync(ws)
    recorded = (server.value(WS, "prod", "DB_PASSWORD", "/backend"), server.value(WS, "dev", "api_key"))
    server.put(WS, "prod", "DB_PASSWORD", "edited-in-the-dashboard", "/backend")
    server.remove(WS, "dev", "api_key")
    result = detect_drift(ws)
    assert {(d.secret, d.details["reason"]) for d in result.details} == {
        ("db_password", "value_changed"), ("api_key", "target_missing")}
    [changed] = [d for d in result.details if d.secret == "db_password"]
    assert changed.details["actual_hash"] == sha256_text("edited-in-the-dashboard")
    assert sync(ws, repair=True).errors == []
    assert (server.value(WS, "prod", "DB_PASSWORD", "/backend"), server.value(WS, "dev", "api_key")) == recorded
    assert not detect_drift(ws).has_drift


def test_a_value_hidden_from_the_token_is_unverifiable(tmp_path: Path, server: InfisicalServer) -> None:
    ws = workspace(tmp_path, {"inf": infisical_provider(server)}, secret("hidden", target("inf", "infisical")))
    sync(ws)
    server.hide(WS, "dev", "hidden")
    result = detect_drift(ws)
    assert [d.details["reason"] for d in result.details] == ["unverifiable"] and not result.has_drift
    assert result.details[0].details["store_updated_at"] is not None


def test_dry_run_sends_no_request(tmp_path: Path, server: InfisicalServer) -> None:
    assert sync(_workspace(tmp_path, server), dry_run=True).secrets_generated == ["db_password", "api_key"]
    assert server.requests == []


def test_a_throttled_answer_is_retried_after_retry_after(tmp_path: Path, server: InfisicalServer) -> None:
    ws = _workspace(tmp_path, server)
    server.throttle(429, 1, retry_after="0")
    assert sync(ws).errors == []
    assert server.value(WS, "dev", "api_key") and server.value(WS, "prod", "DB_PASSWORD", "/backend")
    assert len(server.requests) == 5  # two GETs and two POSTs, one of them twice


def test_throttling_that_does_not_end_fails_the_target_after_bounded_attempts(
    tmp_path: Path, server: InfisicalServer
) -> None:
    ws = workspace(tmp_path, {"inf": infisical_provider(server)}, secret("a", target("inf", "infisical")))
    server.throttle(429, 10, retry_after="0")
    [error] = sync(ws).errors
    assert error.message == "inf/infisical/ws-app/dev: write throttled (429), still after 3 retries"
    assert len(server.requests) == 4


def test_universal_auth_logs_in_once_and_uses_the_access_token(tmp_path: Path, server: InfisicalServer) -> None:
    ws = workspace(tmp_path, {"inf": universal_provider(server)},
                   *[secret(f"s{i}", target("inf", "infisical", secret_name=f"S{i}")) for i in range(3)])
    assert sync(ws).errors == []
    assert server.logins == 1 and all(server.value(WS, "dev", f"S{i}") for i in range(3))
    assert not detect_drift(ws).has_drift and server.logins == 1


def test_a_revoked_access_token_fails_once_and_the_next_operation_logs_in_again(
    tmp_path: Path, server: InfisicalServer
) -> None:
    ws = workspace(tmp_path, {"inf": universal_provider(server)}, secret("a", target("inf", "infisical")))
    sync(ws)
    server.revoke_access_tokens()
    [item] = detect_drift(ws).details
    assert item.details["reason"] == "target_unreadable" and "401" in item.details["problem"]
    assert not detect_drift(ws).has_drift and server.logins == 2


def test_a_refused_login_fails_the_target_without_showing_the_credentials(
    tmp_path: Path, server: InfisicalServer
) -> None:
    ws = workspace(tmp_path, {"inf": universal_provider(server, client_secret="wrong-s3cret")},
                   secret("a", target("inf", "infisical")))
    [error] = sync(ws).errors
    assert error.message == ("inf/infisical/ws-app/dev: not authenticated (401: the token is missing, invalid or "
                             "expired)")
    assert server.requests == [("POST", "/api/v1/auth/universal-auth/login")]


def test_a_wrong_token_fails_the_target_without_showing_it(tmp_path: Path, server: InfisicalServer) -> None:
    provider = {**infisical_provider(server), "auth": {"kind": "token", "config": {"token": "inf-wrong-s3cret"}}}
    ws = workspace(tmp_path, {"inf": provider}, secret("a", target("inf", "infisical")))
    [error] = sync(ws).errors
    assert "401" in error.message and "s3cret" not in error.message


@pytest.mark.parametrize("variable", ["INFISICAL_TOKEN", "INFISICAL_SERVICE_TOKEN"])
def test_the_token_and_api_url_come_from_the_environment_when_the_provider_names_none(
    tmp_path: Path, server: InfisicalServer, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, server.token)
    monkeypatch.setenv("INFISICAL_API_URL", f"{server.url}/api")
    ws = workspace(tmp_path, {}, secret("a", target("infisical", "infisical", workspace_id=WS, environment="staging")))
    assert sync(ws).errors == []
    assert server.value(WS, "staging", "a") is not None


def test_universal_auth_credentials_come_from_the_environment_too(
    tmp_path: Path, server: InfisicalServer, monkeypatch: pytest.MonkeyPatch, operator_allows: Any
) -> None:
    egress = operator_allows("infisical", server.url)  # a self-hosted instance the operator lists
    monkeypatch.setenv("INFISICAL_UNIVERSAL_AUTH_CLIENT_ID", server.client_id)
    monkeypatch.setenv("INFISICAL_UNIVERSAL_AUTH_CLIENT_SECRET", server.client_secret)
    ws = workspace(tmp_path, {"inf": {"kind": "infisical", "config": {"api_url": f"{server.url}/api"}}},
                   secret("a", target("inf", "infisical", workspace_id=WS)))
    ws = replace(ws, egress=egress)
    assert sync(ws).errors == [] and server.logins == 1


def test_no_credentials_fail_the_target_before_any_request(tmp_path: Path, server: InfisicalServer) -> None:
    ws = workspace(tmp_path, {"inf": {"kind": "infisical", "config": {"api_url": f"{server.url}/api"}}},
                   secret("a", target("inf", "infisical", workspace_id=WS)))
    [error] = sync(ws).errors
    assert error.message == ("provider 'inf': no Infisical credentials (set token, or client_id and client_secret, "
                             "in the provider's auth, or INFISICAL_TOKEN)")
    assert server.requests == []


def test_a_value_infisical_would_trim_is_refused_without_quoting_it(tmp_path: Path, server: InfisicalServer) -> None:
    padded = {"name": "padded", "kind": "static", "config": {"value": " padded-value "},
              "targets": [target("inf", "infisical")]}
    ws = workspace(tmp_path, {"inf": infisical_provider(server)}, padded)
    [error] = sync(ws).errors
    assert error.message == ("inf/infisical/ws-app/dev: the value of 'padded' begins or ends with whitespace, which "
                             "Infisical strips: it would not be stored as given")
    assert server.requests == []


def test_a_write_held_for_approval_fails_the_target(tmp_path: Path, server: InfisicalServer) -> None:
    server.require_approval(WS, "dev")
    ws = workspace(tmp_path, {"inf": infisical_provider(server)}, secret("a", target("inf", "infisical")))
    [error] = sync(ws).errors
    assert error.message == ("inf/infisical/ws-app/dev: 'a' was not written: an approval policy of the environment "
                             "holds the change for review in Infisical")
    assert server.value(WS, "dev", "a") is None and "a" not in lock_entries(ws)


def test_a_missing_folder_fails_the_write_naming_what_may_be_missing(tmp_path: Path, server: InfisicalServer) -> None:
    ws = workspace(tmp_path, {"inf": infisical_provider(server)},
                   secret("a", target("inf", "infisical", secret_path="/nowhere")))
    [error] = sync(ws).errors
    assert error.message == ("inf/infisical/ws-app/dev/nowhere: write failed (404: no such project, environment or "
                             "folder, or the token cannot see it)")


def test_writes_overlap_up_to_the_providers_max_concurrency(tmp_path: Path, server: InfisicalServer) -> None:
    ws = workspace(tmp_path, {"inf": infisical_provider(server, max_concurrency=2)},
                   *[secret(f"s{i}", target("inf", "infisical", secret_name=f"S{i}")) for i in range(4)])
    assert sync_while_held(ws, server, 2).errors == [] and server.max_in_flight == 2
    assert all(server.value(WS, "dev", f"S{i}") for i in range(4))


def test_a_lockfile_recording_secretzero_s_id_is_recognised(tmp_path: Path, server: InfisicalServer) -> None:
    ws = workspace(tmp_path, {"inf": infisical_provider(server)},
                   secret("a", target("inf", "infisical", secret_name="A")))
    # What SecretZero leaves behind: the secret in the store and its own entry for it.
    server.put(WS, "dev", "A", "kept")
    stamp, digest = "2026-01-02T03:04:05+00:00", sha256_text("kept")
    entry = {"hash": digest, "created_at": stamp, "updated_at": stamp, "targets": {"inf/infisical/": digest}}
    ws.lockfile_path.write_text(json.dumps({"version": "1.0", "secrets": {"a": entry}}))
    assert not detect_drift(ws).has_drift
    assert sync(ws).secrets_generated == [] and server.value(WS, "dev", "A") == "kept"
    server.put(WS, "dev", "A", "edited")
    assert [d.details["reason"] for d in detect_drift(ws).details] == ["value_changed"]


def test_the_token_may_come_from_a_token_file_beside_the_definition(tmp_path: Path, server: InfisicalServer) -> None:
    (tmp_path / "infisical.token").write_text(server.token + "\n")
    provider = {**infisical_provider(server), "auth": {"kind": "token", "config": {"token_file": "infisical.token"}}}
    ws = workspace(tmp_path, {"inf": provider}, secret("a", target("inf", "infisical")))
    assert sync(ws).errors == [] and server.value(WS, "dev", "a") is not None
