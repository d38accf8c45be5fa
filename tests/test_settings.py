"""Settings derived from the environment: strict parsing, the generated secret key and CORS."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings

from project.environment import env_bool, env_choice, env_int, env_paths, env_true_only
from project.secret_key import load_or_create

ROOT = Path(__file__).resolve().parents[1]


def clean_env(tmp_path: Path, **given: str) -> dict[str, str]:
    """The parent's environment less every service setting, then exactly the ones given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    return {**env, "SERVICE_DATA_DIR": str(tmp_path / "data"), **given}


def settings_in_subprocess(tmp_path: Path, names: list[str], **given: str) -> subprocess.CompletedProcess[str]:
    """Import project.settings afresh with this environment and print the named settings as JSON."""
    code = f"import json, project.settings as s; print(json.dumps({{n: getattr(s, n) for n in {names!r}}}))"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean_env(tmp_path, **given),
                          capture_output=True, text=True, timeout=60)


# --- Strict parsing ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("raw", "expected"),
    [("true", True), ("TRUE", True), ("True", True), ("1", True), ("yes", True), ("YeS", True), (" yes ", True),
     ("false", False), ("FALSE", False), ("False", False), ("0", False), ("no", False), ("nO", False)],
)
def test_env_bool_accepts_true_false_1_0_yes_no_in_any_case(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool
) -> None:
    monkeypatch.setenv("SERVICE_TEST_FLAG", raw)
    assert env_bool("SERVICE_TEST_FLAG", default=not expected) is expected


@pytest.mark.parametrize("raw", [None, "", "   "])
def test_env_bool_uses_the_default_when_unset_or_empty(monkeypatch: pytest.MonkeyPatch, raw: str | None) -> None:
    if raw is None:
        monkeypatch.delenv("SERVICE_TEST_FLAG", raising=False)
    else:
        monkeypatch.setenv("SERVICE_TEST_FLAG", raw)
    assert env_bool("SERVICE_TEST_FLAG", default=True) is True
    assert env_bool("SERVICE_TEST_FLAG", default=False) is False


@pytest.mark.parametrize("raw", ["ture", "on", "off", "y", "2", "enabled"])
def test_env_bool_refuses_anything_else_naming_the_variable(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("SERVICE_TEST_FLAG", raw)
    with pytest.raises(ImproperlyConfigured, match=r"^SERVICE_TEST_FLAG must be true, false, 1, 0, yes or no"):
        env_bool("SERVICE_TEST_FLAG")


def test_env_int_reads_integers_and_defaults_when_unset_or_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TEST_NUMBER", " 42 ")
    assert env_int("SERVICE_TEST_NUMBER", 7, minimum=1, maximum=65535) == 42
    monkeypatch.setenv("SERVICE_TEST_NUMBER", "")
    assert env_int("SERVICE_TEST_NUMBER", 7) == 7
    monkeypatch.delenv("SERVICE_TEST_NUMBER")
    assert env_int("SERVICE_TEST_NUMBER", 7) == 7


@pytest.mark.parametrize("raw", ["abc", "1.5", "8000x", "0x1f"])
def test_env_int_refuses_text_naming_the_variable(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("SERVICE_TEST_NUMBER", raw)
    with pytest.raises(ImproperlyConfigured, match=rf"^SERVICE_TEST_NUMBER must be an integer, not '{re.escape(raw)}'"):
        env_int("SERVICE_TEST_NUMBER", 7)


@pytest.mark.parametrize(
    ("raw", "minimum", "maximum", "expected"),
    [("0", 1, 65535, "an integer from 1 to 65535"), ("65536", 1, 65535, "an integer from 1 to 65535"),
     ("-3", 1, None, "an integer of at least 1"), ("11", None, 10, "an integer of at most 10")],
)
def test_env_int_refuses_values_out_of_range_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str, minimum: int | None, maximum: int | None, expected: str
) -> None:
    monkeypatch.setenv("SERVICE_TEST_NUMBER", raw)
    with pytest.raises(ImproperlyConfigured, match=rf"^SERVICE_TEST_NUMBER must be {expected}, not '{raw}'"):
        env_int("SERVICE_TEST_NUMBER", 7, minimum=minimum, maximum=maximum)


def test_env_choice_takes_any_case_and_refuses_other_words(monkeypatch: pytest.MonkeyPatch) -> None:
    levels = ("debug", "info", "warning", "error")
    monkeypatch.setenv("SERVICE_TEST_LEVEL", "Warning")
    assert env_choice("SERVICE_TEST_LEVEL", "info", levels) == "warning"
    monkeypatch.setenv("SERVICE_TEST_LEVEL", "verbose")
    with pytest.raises(ImproperlyConfigured, match=r"^SERVICE_TEST_LEVEL must be one of debug, info, warning, error"):
        env_choice("SERVICE_TEST_LEVEL", "info", levels)


@pytest.mark.parametrize(("raw", "expected"), [("true", True), ("TRUE", True), ("false", False), ("", False)])
def test_env_true_only_takes_the_words_true_and_false(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool
) -> None:
    monkeypatch.setenv("SERVICE_TEST_SWITCH", raw)
    assert env_true_only("SERVICE_TEST_SWITCH") is expected


@pytest.mark.parametrize("raw", ["1", "yes", "on", "ture"])
def test_env_true_only_refuses_every_other_spelling_of_true(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("SERVICE_TEST_SWITCH", raw)
    with pytest.raises(ImproperlyConfigured, match=r"^SERVICE_TEST_SWITCH must be true or false \(only these two"):
        env_true_only("SERVICE_TEST_SWITCH")


def test_env_paths_splits_on_colons_drops_blanks_and_makes_paths_absolute(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SERVICE_TARGET_ROOTS", "/srv/app: :rel/dir::")
    assert env_paths("SERVICE_TARGET_ROOTS") == (Path("/srv/app"), tmp_path / "rel" / "dir")


def test_env_paths_is_empty_when_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERVICE_TARGET_ROOTS", raising=False)
    assert env_paths("SERVICE_TARGET_ROOTS") == ()


@pytest.mark.slow
def test_target_roots_default_to_none_given_and_are_read_at_start(tmp_path: Path) -> None:
    code = "import project.settings as s; print([str(p) for p in s.SERVICE_TARGET_ROOTS])"
    default = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean_env(tmp_path),
                             capture_output=True, text=True, timeout=60)
    given = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                           env=clean_env(tmp_path, SERVICE_TARGET_ROOTS="/srv/app:/etc/app"),
                           capture_output=True, text=True, timeout=60)
    assert default.stdout.strip() == "[]", default.stderr
    assert given.stdout.strip() == "['/srv/app', '/etc/app']", given.stderr


# --- The settings module as a process sees it at start ----------------------------------------

@pytest.mark.slow
def test_settings_have_their_defaults_when_nothing_is_set(tmp_path: Path) -> None:
    names = ["SERVICE_HOST", "SERVICE_PORT", "SERVICE_WORKERS", "SERVICE_THREADS", "SERVICE_TIMEOUT",
             "SERVICE_LOG_LEVEL", "SERVICE_ALLOW_VALUE_READ", "SERVICE_ALLOW_SCRIPTS", "DEBUG",
             "SERVICE_MAX_BODY_BYTES", "SERVICE_MAX_DEFINITION_BYTES", "SERVICE_BEHIND_PROXY"]
    result = settings_in_subprocess(tmp_path, names)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "SERVICE_HOST": "127.0.0.1", "SERVICE_PORT": 8000, "SERVICE_WORKERS": 2, "SERVICE_THREADS": 4,
        "SERVICE_TIMEOUT": 300, "SERVICE_LOG_LEVEL": "INFO", "SERVICE_ALLOW_VALUE_READ": False,
        "SERVICE_ALLOW_SCRIPTS": False, "DEBUG": False, "SERVICE_MAX_BODY_BYTES": 1_048_576,
        "SERVICE_MAX_DEFINITION_BYTES": 16 * 1_048_576, "SERVICE_BEHIND_PROXY": False,
    }


@pytest.mark.slow
def test_the_schedules_default_to_hourly_rotation_and_a_daily_drift_check(tmp_path: Path) -> None:
    names = ["SERVICE_ROTATION_SCHEDULE", "SERVICE_DRIFT_SCHEDULE", "SERVICE_JOB_WAIT_SECONDS", "SERVICE_LOCK_TIMEOUT"]
    result = settings_in_subprocess(tmp_path, names)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "SERVICE_ROTATION_SCHEDULE": "0 * * * *", "SERVICE_DRIFT_SCHEDULE": "0 0 * * *",
        "SERVICE_JOB_WAIT_SECONDS": 30, "SERVICE_LOCK_TIMEOUT": 60,
    }


@pytest.mark.slow
def test_a_worker_has_two_write_runners_so_one_projects_long_sync_does_not_hold_up_another(tmp_path: Path) -> None:
    names = ["SERVICE_JOB_WORKERS", "SERVICE_JOB_WRITE_WORKERS"]
    default = settings_in_subprocess(tmp_path, names)
    assert json.loads(default.stdout) == {"SERVICE_JOB_WORKERS": 3, "SERVICE_JOB_WRITE_WORKERS": 2}, default.stderr
    # Two runners in all leave one for reads: the write runners' default follows.
    two = settings_in_subprocess(tmp_path, names, SERVICE_JOB_WORKERS="2")
    assert json.loads(two.stdout) == {"SERVICE_JOB_WORKERS": 2, "SERVICE_JOB_WRITE_WORKERS": 1}, two.stderr


@pytest.mark.slow
def test_a_schedule_takes_cron_syntax_or_off(tmp_path: Path) -> None:
    result = settings_in_subprocess(tmp_path, ["SERVICE_ROTATION_SCHEDULE", "SERVICE_DRIFT_SCHEDULE"],
                                    SERVICE_ROTATION_SCHEDULE="*/15 * * * *", SERVICE_DRIFT_SCHEDULE="OFF")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"SERVICE_ROTATION_SCHEDULE": "*/15 * * * *", "SERVICE_DRIFT_SCHEDULE": None}


@pytest.mark.slow
@pytest.mark.parametrize("variable", ["SERVICE_ROTATION_SCHEDULE", "SERVICE_DRIFT_SCHEDULE"])
@pytest.mark.parametrize("raw", ["every hour", "61 * * * *", "* * *"])
def test_an_invalid_cron_expression_stops_the_service_naming_the_variable(
    tmp_path: Path, variable: str, raw: str
) -> None:
    result = settings_in_subprocess(tmp_path, ["SERVICE_PORT"], **{variable: raw})
    assert result.returncode != 0
    assert f"django.core.exceptions.ImproperlyConfigured: {variable} must be a cron expression" in result.stderr


@pytest.mark.slow
def test_value_read_is_enabled_by_the_word_true(tmp_path: Path) -> None:
    result = settings_in_subprocess(tmp_path, ["SERVICE_ALLOW_VALUE_READ"], SERVICE_ALLOW_VALUE_READ="True")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"SERVICE_ALLOW_VALUE_READ": True}


@pytest.mark.parametrize(
    ("variable", "raw"),
    [("SERVICE_ALLOW_VALUE_READ", "1"), ("SERVICE_ALLOW_SCRIPTS", "ture"), ("SERVICE_DEBUG", "on"),
     ("SERVICE_PORT", "70000"), ("SERVICE_WORKERS", "0"), ("SERVICE_THREADS", "four"), ("SERVICE_TIMEOUT", "0"),
     ("SERVICE_MAX_BODY_BYTES", "1MB"), ("SERVICE_MAX_DEFINITION_BYTES", "0"), ("SERVICE_LOG_LEVEL", "trace"),
     ("SERVICE_BEHIND_PROXY", "maybe"), ("SERVICE_JOB_WAIT_SECONDS", "-1"), ("SERVICE_JOB_WORKERS", "0"),
     ("SERVICE_JOB_WORKERS", "1"), ("SERVICE_JOB_WRITE_WORKERS", "0"), ("SERVICE_JOB_WRITE_WORKERS", "3"),
     ("SERVICE_WORKER_HEARTBEAT_SECONDS", "0"),
     ("SERVICE_WORKER_HEARTBEAT_SECONDS", "21"), ("SERVICE_JOBS_PER_KEY", "0"), ("SERVICE_JOBS_PER_PROJECT", "0"),
     ("SERVICE_WORKER_NICE", "-1"), ("SERVICE_WORKER_NICE", "20"), ("SERVICE_SERVE_WORKER", "maybe"),
     ("SERVICE_JOB_QUEUE", "a" * 26), ("SERVICE_LOCK_TIMEOUT", "0")],
)
@pytest.mark.slow
def test_a_value_the_settings_do_not_understand_refuses_to_start(tmp_path: Path, variable: str, raw: str) -> None:
    result = settings_in_subprocess(tmp_path, ["SERVICE_PORT"], **{variable: raw})
    assert result.returncode != 0
    assert f"django.core.exceptions.ImproperlyConfigured: {variable} must be" in result.stderr


@pytest.mark.slow
def test_a_bad_port_stops_manage_py_with_one_line_naming_the_variable(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, capture_output=True, text=True,
                            env=clean_env(tmp_path, SERVICE_PORT="80OO"), timeout=60)
    assert result.returncode != 0
    assert result.stderr == "Configuration error: SERVICE_PORT must be an integer from 1 to 65535, not '80OO'.\n"
    assert "Traceback" not in result.stdout + result.stderr


def test_no_module_but_settings_reads_a_service_variable_from_the_environment() -> None:
    # A SERVICE_* name quoted right after an environment read on the same line
    # (KUBERNETES_SERVICE_HOST is not one: the quote must come right before SERVICE_).
    read = re.compile(r"""(?:\benviron\b|\bgetenv\b)[^\n]*["']SERVICE_""")
    sources = [path for folder in ("secretsapi", "audit", "project") for path in (ROOT / folder).rglob("*.py")]
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in [*sources, ROOT / "manage.py"] if path != ROOT / "project" / "settings.py"
        for number, line in enumerate(path.read_text().splitlines(), 1) if read.search(line)
    ]
    assert len(sources) > 20
    assert offenders == []


# --- Secret key and CORS ----------------------------------------------------------------------


def test_secret_key_is_generated_once_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "data" / "secret_key"
    first = load_or_create(path)
    assert len(first) >= 50
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert load_or_create(path) == first


def test_secret_key_leaves_no_temp_files(tmp_path: Path) -> None:
    load_or_create(tmp_path / "secret_key")
    assert [p.name for p in tmp_path.iterdir()] == ["secret_key"]


def preflight(origin: str):  # type: ignore[no-untyped-def]
    return Client().options(
        "/sync", HTTP_ORIGIN=origin, HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="x-api-key, content-type",
    )


def test_cors_allows_every_origin_with_credentials_by_default(api_key: str) -> None:
    response = preflight("https://dashboard.example")
    assert response["Access-Control-Allow-Origin"] == "https://dashboard.example"
    assert response["Access-Control-Allow-Credentials"] == "true"
    assert "x-api-key" in response["Access-Control-Allow-Headers"].lower()


@override_settings(CORS_ALLOW_ALL_ORIGINS=False, CORS_ALLOWED_ORIGINS=["https://ok.example"])
def test_cors_can_be_restricted_to_a_list(api_key: str) -> None:
    assert preflight("https://ok.example")["Access-Control-Allow-Origin"] == "https://ok.example"
    assert "Access-Control-Allow-Origin" not in preflight("https://evil.example")


# --- Where the server's own credentials may go ---------------------------------------------------

@pytest.mark.slow
def test_credential_addresses_and_provider_reads_are_grouped_by_kind(tmp_path: Path) -> None:
    done = settings_in_subprocess(
        tmp_path, ["SERVICE_CREDENTIAL_ADDRESSES", "SERVICE_PROVIDER_READ"],
        SERVICE_CREDENTIAL_ADDRESSES="vault=https://vault.internal:8200, jenkins=http://ci:8080 vault=https://*.vault.lan",
        SERVICE_PROVIDER_READ="vault/vault_kv=secret/shared/")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "SERVICE_CREDENTIAL_ADDRESSES": {"vault": ["https://vault.internal:8200", "https://*.vault.lan"],
                                         "jenkins": ["http://ci:8080"]},
        "SERVICE_PROVIDER_READ": {"vault/vault_kv": ["secret/shared/"]}}


@pytest.mark.slow
@pytest.mark.parametrize("raw", ["vault", "vault=vault.internal", "=https://x", "vault=ftp://x", "vault=https://x/api"])
def test_an_entry_that_is_not_a_kind_and_an_address_stops_the_service_naming_the_variable(
    tmp_path: Path, raw: str
) -> None:
    done = settings_in_subprocess(tmp_path, ["SERVICE_CREDENTIAL_ADDRESSES"], SERVICE_CREDENTIAL_ADDRESSES=raw)
    assert done.returncode != 0
    assert "SERVICE_CREDENTIAL_ADDRESSES must list <name>=<value> entries" in done.stderr


@pytest.mark.parametrize(("raw", "parsed"), [
    (None, None), ("-", {}), ("vault/vault_kv=secret/a/ aws/ssm_parameter=/a/", {
        "vault/vault_kv": ["secret/a/"], "aws/ssm_parameter": ["/a/"]}),
])
@pytest.mark.slow
def test_provider_read_and_write_locations_are_unset_listed_or_none(
    tmp_path: Path, raw: str | None, parsed: Any
) -> None:
    given = {} if raw is None else {"SERVICE_PROVIDER_READ": raw, "SERVICE_PROVIDER_WRITE": raw}
    done = settings_in_subprocess(tmp_path, ["SERVICE_PROVIDER_READ", "SERVICE_PROVIDER_WRITE"], **given)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"SERVICE_PROVIDER_READ": parsed, "SERVICE_PROVIDER_WRITE": parsed}


@pytest.mark.slow
@pytest.mark.parametrize(("raw", "parsed"), [(None, None), ("-", []), ("prod-admin, ci", ["prod-admin", "ci"])])
def test_aws_profiles_and_kube_contexts_are_unset_listed_or_none(tmp_path: Path, raw: str | None, parsed: Any) -> None:
    given = {} if raw is None else {"SERVICE_AWS_PROFILES": raw, "SERVICE_KUBE_CONTEXTS": raw}
    done = settings_in_subprocess(tmp_path, ["SERVICE_AWS_PROFILES", "SERVICE_KUBE_CONTEXTS"], **given)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"SERVICE_AWS_PROFILES": parsed, "SERVICE_KUBE_CONTEXTS": parsed}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SERVICE_AWS_PROFILES", "SERVICE_AWS_ROLES", "SERVICE_KUBE_CONTEXTS",
                                  "SERVICE_AZURE_IDENTITIES"])
def test_a_profile_or_context_that_is_not_a_name_stops_the_service_naming_the_variable(
    tmp_path: Path, name: str
) -> None:
    done = settings_in_subprocess(tmp_path, [name], **{name: "prod admin"})
    assert done.returncode != 0
    assert f"{name} must list names" in done.stderr
