"""Azure Key Vault and Vercel targets through the engine: sync, rotation, drift with read-back, repair,
dry run, throttling and credentials, against their protocol peers with the real client libraries
(azure-keyvault-secrets and azure-identity over HTTPS; requests for Vercel's REST API)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.definition.model import TargetSpec
from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.validate import validate_document
from secretsapi.service.workspace import Workspace
from tests.factories import azure_provider, lock_entries, secret, target, vercel_provider, workspace
from tests.peers.azure_keyvault_server import AzureKeyVaultServer
from tests.peers.vercel_server import VercelServer


def _host(keyvault: AzureKeyVaultServer) -> str:
    return keyvault.url.removeprefix("https://")


def _findings(ws: Workspace) -> dict[str, tuple[str, str]]:
    return {i.details["target"]: (i.secret, i.details["reason"]) for i in detect_drift(ws).details}


def _kv_workspace(tmp_path: Path, keyvault: AzureKeyVaultServer, also: dict[str, Any] | None = None,
                  **config: Any) -> Workspace:
    targets = [target("azure", "azure_keyvault", secret_name="db-password", **config), *([also] if also else [])]
    return workspace(tmp_path, {"azure": azure_provider(keyvault)}, secret("db", *targets))


# -- Azure Key Vault ------------------------------------------------------------------------------


def test_sync_sets_a_key_vault_secret_with_its_content_type_and_tags_after_the_challenge(
    tmp_path: Path, keyvault: AzureKeyVaultServer
) -> None:
    ws = _kv_workspace(tmp_path, keyvault, content_type="text/plain", tags={"team": "core"})
    assert sync(ws).errors == []
    stored = keyvault.bundle("db-password")
    assert stored is not None
    assert (stored["contentType"], stored["tags"]) == ("text/plain", {"team": "core"})
    assert keyvault.challenges == 1  # the SDK's first request was answered with the challenge
    assert ("POST", f"/{keyvault.tenant_id}/oauth2/v2.0/token") in keyvault.requests
    entry = lock_entries(ws)["db"]
    # SecretZero's id: `secret_name` and `vault_url` are not among the keys it takes one from.
    assert entry["targets"] == {"azure/azure_keyvault/": sha256_text(stored["value"])}
    assert entry["hash"] == sha256_text(stored["value"])
    assert not detect_drift(ws).has_drift


def test_secretzeros_key_vault_alias_writes_the_vault_and_keeps_its_kind_in_the_target_id(
    tmp_path: Path, keyvault: AzureKeyVaultServer
) -> None:
    ws = workspace(tmp_path, {"azure": azure_provider(keyvault)}, secret("api-key", target("azure", "key_vault")))
    assert sync(ws).errors == []
    value = keyvault.value("api-key")  # no secret_name: the secret's own name
    assert value is not None
    # SecretZero's id keeps the kind as written.
    assert lock_entries(ws)["api-key"]["targets"] == {"azure/key_vault/": sha256_text(value)}


def test_a_vault_name_stands_for_its_public_cloud_url_in_the_own_target_id(tmp_path: Path) -> None:
    # The own id is recorded where another target of the secret shares SecretZero's.
    spec = TargetSpec("azure", "azure_keyvault", {"vault_name": "myvault", "secret_name": "db"},
                      shares_secretzero_id=True)
    ctx = TargetContext(tmp_path, {}, lambda key: None, ())
    assert get_kind(spec.type).target_id(spec, ctx) == "azure/azure_keyvault/myvault.vault.azure.net/db"


def test_a_key_vault_rotation_sets_a_new_version_and_leaves_other_secrets_alone(
    tmp_path: Path, keyvault: AzureKeyVaultServer
) -> None:
    keyvault.put("someone-elses", "kept")
    ws = _kv_workspace(tmp_path, keyvault)
    sync(ws)
    before = keyvault.value("db-password")

    assert execute_rotation(ws, force=True).rotated == ["db"]

    assert keyvault.versions("db-password") == 2 and keyvault.value("db-password") != before
    assert keyvault.value("someone-elses") == "kept" and keyvault.versions("someone-elses") == 1
    assert not detect_drift(ws).has_drift


def test_key_vault_drift_reads_values_back_and_repair_puts_the_recorded_one_back(
    tmp_path: Path, keyvault: AzureKeyVaultServer
) -> None:
    # A repair copies the recorded value from a target still holding it: here, a dotenv file.
    ws = _kv_workspace(tmp_path, keyvault, also=target("local", "file", path="out/app.env"))
    sync(ws)
    recorded = keyvault.value("db-password")
    tid = "azure/azure_keyvault/"

    keyvault.put("db-password", "changed behind our back")
    assert _findings(ws) == {tid: ("db", "value_changed")}
    keyvault.delete("db-password")  # soft delete: the name stays taken until recovered
    assert _findings(ws) == {tid: ("db", "target_missing")}

    assert sync(ws, repair=True).secrets_repaired == ["db"]
    assert ("POST", "/deletedsecrets/db-password/recover") in keyvault.requests
    assert keyvault.value("db-password") == recorded
    assert keyvault.versions("db-password") == 3  # its history recovered, then the recorded value set
    assert not detect_drift(ws).has_drift


def test_a_purged_key_vault_secret_is_missing_and_a_forced_sync_sets_it_anew(
    tmp_path: Path, keyvault: AzureKeyVaultServer
) -> None:
    ws = _kv_workspace(tmp_path, keyvault)
    sync(ws)
    keyvault.delete("db-password")
    keyvault.purge("db-password")
    assert _findings(ws) == {"azure/azure_keyvault/": ("db", "target_missing")}
    assert sync(ws, force=True).errors == []
    assert keyvault.versions("db-password") == 1 and not detect_drift(ws).has_drift


def test_a_key_vault_dry_run_sends_no_request(tmp_path: Path, keyvault: AzureKeyVaultServer) -> None:
    ws = _kv_workspace(tmp_path, keyvault)
    assert sync(ws, dry_run=True).secrets_generated == ["db"]
    assert keyvault.requests == [] and not ws.lockfile_path.exists()


def test_key_vault_throttling_is_retried_after_its_retry_after(
    tmp_path: Path, keyvault: AzureKeyVaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps: list[float] = []
    monkeypatch.setattr("urllib3.util.retry.time.sleep", sleeps.append)  # the one retry policy's (rest)
    keyvault.throttle(429, 1, retry_after="2")
    ws = _kv_workspace(tmp_path, keyvault)
    assert sync(ws).errors == []
    assert keyvault.value("db-password") is not None
    assert sleeps == [2.0]


def test_key_vault_throttling_that_does_not_end_fails_the_target_after_bounded_retries(
    tmp_path: Path, keyvault: AzureKeyVaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps: list[float] = []
    monkeypatch.setattr("urllib3.util.retry.time.sleep", sleeps.append)
    keyvault.throttle(429, 100, retry_after="3600")
    (error,) = sync(_kv_workspace(tmp_path, keyvault)).errors
    assert error.message == f"{_host(keyvault)}/db-password: throttled by Key Vault (429 Throttled)".join(
        ["azure/azure_keyvault/", ""])
    assert len(keyvault.requests) == 4 and sleeps == [10.0] * 3  # Retry-After capped


def test_key_vault_credentials_can_come_from_the_azure_environment(
    tmp_path: Path, keyvault: AzureKeyVaultServer, monkeypatch: pytest.MonkeyPatch, operator_allows: Any
) -> None:
    egress = operator_allows("azure", keyvault.url)  # the server's credentials, to a vault the operator lists
    for name, value in {"AZURE_TENANT_ID": keyvault.tenant_id, "AZURE_CLIENT_ID": keyvault.client_id,
                        "AZURE_CLIENT_SECRET": keyvault.client_secret, "AZURE_AUTHORITY_HOST": keyvault.url}.items():
        monkeypatch.setenv(name, value)
    provider = {"kind": "azure", "config": {"disable_instance_discovery": True, "connection_verify": str(keyvault.ca)}}
    ws = workspace(tmp_path, {"azure": provider},
                   secret("db", target("azure", "azure_keyvault", vault_url=keyvault.url, secret_name="db-password")))
    ws = replace(ws, egress=egress)
    assert sync(ws).errors == []
    assert keyvault.value("db-password") is not None


def test_rejected_azure_credentials_fail_the_target_without_showing_them(
    tmp_path: Path, keyvault: AzureKeyVaultServer
) -> None:
    provider = azure_provider(keyvault)
    provider["auth"]["config"]["client_secret"] = "wrong-s3cr3t-value"
    ws = workspace(tmp_path, {"azure": provider}, secret("db", target("azure", "azure_keyvault", secret_name="db")))
    (error,) = sync(ws).errors
    assert error.message.startswith(f"azure/azure_keyvault/{_host(keyvault)}/db: not authenticated")
    assert "s3cr3t" not in error.message and keyvault.value("db") is None


def test_a_vault_whose_certificate_is_not_trusted_is_refused(tmp_path: Path, keyvault: AzureKeyVaultServer) -> None:
    ws = workspace(tmp_path, {"azure": azure_provider(keyvault, connection_verify=True)},
                   secret("db", target("azure", "azure_keyvault", secret_name="db")))
    (error,) = sync(ws).errors
    assert error.message == f"azure/azure_keyvault/{_host(keyvault)}/db: cannot reach the endpoint (TLS error)"
    assert keyvault.value("db") is None


def test_tls_verification_cannot_be_turned_off(tmp_path: Path, keyvault: AzureKeyVaultServer) -> None:
    ws = workspace(tmp_path, {"azure": azure_provider(keyvault, connection_verify=False)},
                   secret("db", target("azure", "azure_keyvault", secret_name="db")))
    (error,) = sync(ws).errors
    assert "connection_verify must be true or the path of a CA bundle" in error.message
    assert keyvault.requests == []


def test_a_missing_azure_sdk_fails_the_target_naming_the_package(
    tmp_path: Path, keyvault: AzureKeyVaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "azure.keyvault.secrets", None)  # import raises ImportError
    (error,) = sync(_kv_workspace(tmp_path, keyvault)).errors
    assert error.message == "install the 'azure-keyvault-secrets' package to use azure/azure_keyvault targets"


# -- Vercel ---------------------------------------------------------------------------------------


def _vercel_workspace(tmp_path: Path, vercel: VercelServer, also: dict[str, Any] | None = None,
                      **config: Any) -> Workspace:
    config.setdefault("environments", ["preview", "production"])
    targets = [target("vercel", "vercel_env", secret_name="API_KEY", **config), *([also] if also else [])]
    return workspace(tmp_path, {"vercel": vercel_provider(vercel)}, secret("api", *targets))


VERCEL_ID = "vercel/vercel_env/"  # SecretZero's: `secret_name` is not among the keys it takes one from
VERCEL_LOCATION = "vercel/vercel_env/prj_app/API_KEY"  # what a target's error names


def test_sync_creates_an_encrypted_vercel_variable_for_its_environments_in_the_team(
    tmp_path: Path, vercel: VercelServer
) -> None:
    ws = _vercel_workspace(tmp_path, vercel)
    assert sync(ws).errors == []
    (variable,) = vercel.variables()
    assert (variable["key"], variable["type"], sorted(variable["target"])) == (
        "API_KEY", "encrypted", ["preview", "production"])
    assert lock_entries(ws)["api"]["targets"] == {VERCEL_ID: sha256_text(variable["value"])}
    assert not detect_drift(ws).has_drift


def test_a_vercel_rotation_updates_the_variable_in_place_and_leaves_the_others_alone(
    tmp_path: Path, vercel: VercelServer
) -> None:
    vercel.add("API_KEY", "development value", ("development",))
    vercel.add("OTHER", "kept", ("production",))
    ws = _vercel_workspace(tmp_path, vercel)
    sync(ws)
    (ours,) = [v for v in vercel.variables() if v["key"] == "API_KEY" and "production" in v["target"]]

    assert execute_rotation(ws, force=True).rotated == ["api"]

    (after,) = [v for v in vercel.variables() if v["id"] == ours["id"]]
    assert after["value"] != ours["value"]
    assert vercel.value("API_KEY", ("development",)) == "development value"
    assert vercel.value("OTHER") == "kept" and len(vercel.variables()) == 3
    assert ("PATCH", f"/v9/projects/prj_app/env/{ours['id']}") in vercel.requests
    assert not detect_drift(ws).has_drift


def test_vercel_drift_reads_values_back_decrypted_and_repair_puts_the_recorded_one_back(
    tmp_path: Path, vercel: VercelServer
) -> None:
    ws = _vercel_workspace(tmp_path, vercel, also=target("local", "file", path="out/app.env"))
    sync(ws)
    envs = ("preview", "production")
    recorded = vercel.value("API_KEY", envs)

    vercel.set_value("API_KEY", "changed behind our back", envs)
    assert _findings(ws) == {VERCEL_ID: ("api", "value_changed")}
    vercel.remove("API_KEY", envs)
    assert _findings(ws) == {VERCEL_ID: ("api", "target_missing")}

    assert sync(ws, repair=True).secrets_repaired == ["api"]
    assert vercel.value("API_KEY", envs) == recorded


def test_vercel_drift_lists_a_projects_variables_once_for_all_its_targets(
    tmp_path: Path, vercel: VercelServer
) -> None:
    secrets = [secret(f"s{i}", target("vercel", "vercel_env", secret_name=f"S{i}")) for i in range(6)]
    ws = workspace(tmp_path, {"vercel": vercel_provider(vercel)}, *secrets)
    sync(ws)
    vercel.set_value("S4", "changed behind our back")
    vercel.remove("S1")
    vercel.requests.clear()

    # Each secret's one target records the same SecretZero id, so the findings are told apart by secret.
    assert {(i.secret, i.details["target"], i.details["reason"]) for i in detect_drift(ws).details} == {
        ("s1", "vercel/vercel_env/", "target_missing"), ("s4", "vercel/vercel_env/", "value_changed")}
    assert vercel.requests.count(("GET", "/v10/projects/prj_app/env")) == 1
    assert sum(1 for method, path in vercel.requests if path.startswith("/v1/")) == 5  # each present value


def test_a_vercel_variable_overlapping_other_environments_is_refused_not_deleted(
    tmp_path: Path, vercel: VercelServer
) -> None:
    vercel.add("API_KEY", "theirs", ("production", "development"))
    (error,) = sync(_vercel_workspace(tmp_path, vercel)).errors
    assert error.message == (f"{VERCEL_LOCATION}: variable 'API_KEY' already exists for development, "
                             "production, overlapping preview, production; remove it or name the same environments")
    assert [v["value"] for v in vercel.variables()] == ["theirs"]


def test_a_vercel_dry_run_sends_no_request(tmp_path: Path, vercel: VercelServer) -> None:
    ws = _vercel_workspace(tmp_path, vercel)
    assert sync(ws, dry_run=True).secrets_generated == ["api"]
    assert vercel.requests == [] and vercel.variables() == []


@pytest.mark.parametrize(("retry_after", "slept"), [(None, 3.0), ("1", 1.0)])
def test_vercel_rate_limits_are_waited_out_until_the_window_resets(
    tmp_path: Path, vercel: VercelServer, monkeypatch: pytest.MonkeyPatch, retry_after: str | None, slept: float
) -> None:
    sleeps: list[float] = []
    monkeypatch.setattr("urllib3.util.retry.time.sleep", sleeps.append)
    monkeypatch.setattr("secretsapi.service.targets.rest.time.time", lambda: 1_000_000_000.0)
    monkeypatch.setattr("tests.peers.vercel_server.time.time", lambda: 1_000_000_000.0)
    vercel.rate_limit(1, reset_in=3, retry_after=retry_after)
    ws = _vercel_workspace(tmp_path, vercel)
    assert sync(ws).errors == []
    assert sleeps == [slept]  # X-RateLimit-Reset when there is no Retry-After
    assert vercel.value("API_KEY", ("preview", "production")) is not None


def test_vercel_rate_limits_that_do_not_end_fail_the_target_after_bounded_retries(
    tmp_path: Path, vercel: VercelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps: list[float] = []
    monkeypatch.setattr("urllib3.util.retry.time.sleep", sleeps.append)
    vercel.rate_limit(100, reset_in=3600)
    (error,) = sync(_vercel_workspace(tmp_path, vercel)).errors
    assert error.message == f"{VERCEL_LOCATION}: throttled by Vercel (429 rate_limited)"
    assert len(vercel.requests) == 4 and len(sleeps) == 3 and all(s <= 10 for s in sleeps)  # reset capped


def test_the_vercel_token_can_come_from_the_environment_and_a_wrong_one_is_never_shown(
    tmp_path: Path, vercel: VercelServer, monkeypatch: pytest.MonkeyPatch, operator_allows: Any
) -> None:
    egress = operator_allows("vercel", vercel.url)
    provider = {"kind": "vercel", "config": {"project_id": "prj_app", "api_url": vercel.url}}
    ws = workspace(tmp_path, {"vercel": provider}, secret("api", target("vercel", "vercel_env", secret_name="K")))
    ws = replace(ws, egress=egress)
    monkeypatch.setenv("VERCEL_TEAM_ID", "team_1")
    monkeypatch.setenv("VERCEL_TOKEN", "wrong-t0ken-s3cr3t")
    (error,) = sync(ws).errors
    assert error.message == "vercel/vercel_env/prj_app/K: permission denied or token rejected (403 forbidden)"
    monkeypatch.setenv("VERCEL_TOKEN", vercel.token)
    assert sync(ws).errors == []
    assert vercel.value("K") is not None


# -- validation -------------------------------------------------------------------------------------


def test_configs_key_vault_or_vercel_refuse_are_warnings_that_the_target_fails_at_sync(
    tmp_path: Path, keyvault: AzureKeyVaultServer, vercel: VercelServer
) -> None:
    azure = target("azure", "azure_keyvault", vault_url="http://vault.example", secret_name="db_pass")
    document = {"version": "1.0", "secrets": [
        secret("db", azure), secret("api", target("vercel", "vercel_env", project_id="p", environments=["staging"]))]}
    report = validate_document(document, environ={})
    assert report.errors == []  # SecretZero accepts them too, and fails them at sync
    assert [w for w in report.warnings if "rotation_period" not in w] == [
        "secrets[0] 'db' targets[0] azure/azure_keyvault: config.vault_url must be an https:// URL "
        "(Key Vault refuses plain HTTP): this target fails at sync",
        "secrets[0] 'db' targets[0] azure/azure_keyvault: config.secret_name 'db_pass' is not a Key Vault "
        "name (1 to 127 letters, digits and dashes): this target fails at sync",
        "secrets[1] 'api' targets[0] vercel/vercel_env: config.environments may name only development, preview, "
        "production: this target fails at sync",
    ]
    ws = workspace(tmp_path, {"azure": azure_provider(keyvault), "vercel": vercel_provider(vercel)},
                   secret("db", target("azure", "azure_keyvault", secret_name="db_pass")),
                   secret("api", target("vercel", "vercel_env", environments=["staging"])))
    assert sorted(e.message for e in sync(ws).errors) == [
        f"azure/azure_keyvault/{_host(keyvault)}/db_pass: config.secret_name 'db_pass' is not a Key Vault name "
        "(1 to 127 letters, digits and dashes)",
        "vercel/vercel_env/prj_app/api: config.environments may name only development, preview, production",
    ]
    assert keyvault.requests == [] and vercel.requests == []


def test_config_values_of_the_wrong_type_are_errors_naming_the_secret_and_the_target() -> None:
    document = {"version": "1.0", "secrets": [
        secret("db", target("azure", "azure_keyvault", secret_name=7, tags=["a"])),
        secret("api", target("vercel", "vercel_env", project_id="p", environments="production")),
    ]}
    assert validate_document(document, environ={}).errors == [
        "secrets[0] 'db' targets[0] azure/azure_keyvault: config.secret_name must be a string",
        "secrets[0] 'db' targets[0] azure/azure_keyvault: config.tags must be a mapping of strings to strings",
        "secrets[0] 'db' targets[0] azure/azure_keyvault: config.vault_url or config.vault_name is required "
        "(in the target, or vault_url or vault_name in provider 'azure')",
        "secrets[1] 'api' targets[0] vercel/vercel_env: config.environments must be a list of strings",
    ]


def test_a_sync_fails_a_vercel_target_whose_environments_are_not_a_list_before_any_request(
    tmp_path: Path, vercel: VercelServer
) -> None:
    ws = workspace(tmp_path, {"vercel": vercel_provider(vercel)},
                   secret("api", target("vercel", "vercel_env", environments=5)))
    (error,) = sync(ws).errors
    assert error.message == "vercel/vercel_env/prj_app/api: config.environments must be a list of strings"
    assert vercel.requests == []


def test_a_lockfile_secretzero_wrote_tracks_both_targets_under_its_own_ids(
    tmp_path: Path, keyvault: AzureKeyVaultServer, vercel: VercelServer
) -> None:
    ws = workspace(tmp_path, {"azure": azure_provider(keyvault), "vercel": vercel_provider(vercel)},
                   secret("db", target("azure", "azure_keyvault", secret_name="db"),
                          target("vercel", "vercel_env", secret_name="DB")))
    keyvault.put("db", "kept")
    vercel.add("DB", "kept", ("production",))
    digest = sha256_text("kept")
    stamp = "2026-01-02T03:04:05+00:00"
    entry = {"hash": digest, "created_at": stamp, "updated_at": stamp,
             "targets": {"azure/azure_keyvault/": digest, "vercel/vercel_env/": digest}}  # SecretZero's ids
    ws.lockfile_path.write_text(json.dumps({"version": "1.0", "secrets": {"db": entry}}))
    assert not detect_drift(ws).has_drift
    keyvault.put("db", "changed")
    assert _findings(ws) == {"azure/azure_keyvault/": ("db", "value_changed")}
