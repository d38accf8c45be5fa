"""Settings for production: no side effects at import, secrets from files, HTTPS in one switch,
the admin's networks."""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client, override_settings

from project.environment import env_networks

ROOT = Path(__file__).resolve().parents[1]
SECRET_SETTINGS = ("SERVICE_API_KEY", "SERVICE_SECRET_KEY", "DATABASE_URL")


def clean_env(tmp_path: Path, **given: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and not k.startswith("DATABASE_URL")}
    return {**env, "SERVICE_DATA_DIR": str(tmp_path / "data"), **given}


def python(tmp_path: Path, code: str, **given: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean_env(tmp_path, **given),
                          capture_output=True, text=True, timeout=120)


def read_settings(tmp_path: Path, names: list[str], **given: str) -> dict[str, object]:
    code = (f"import json, project.settings as s; "
            f"print(json.dumps({{n: getattr(s, n) for n in {names!r}}}, default=str))")
    result = python(tmp_path, code, **given)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- No side effects at import ------------------------------------------------------------------

@pytest.mark.slow
def test_importing_the_settings_creates_no_folder_no_database_and_no_key(tmp_path: Path) -> None:
    result = python(tmp_path, "import project.settings as s; print(s.DATABASES['default']['NAME'])")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path / "data" / "service.sqlite3")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_django_start_makes_the_data_folder_the_database_and_one_key_all_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    code = ("import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'project.settings'; django.setup(); "
            "from django.conf import settings; print(settings.SECRET_KEY)")
    first, second = python(tmp_path, code), python(tmp_path, code)
    assert first.returncode == 0, first.stderr
    assert mode(data) == 0o700 and mode(data / "service.sqlite3") == 0o600 and mode(data / "secret_key") == 0o600
    assert first.stdout == second.stdout == (data / "secret_key").read_text().strip() + "\n"
    assert len(first.stdout.strip()) >= 50


# --- Secrets from files --------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", SECRET_SETTINGS)
def test_a_secret_setting_reads_the_file_its_file_variable_names(tmp_path: Path, name: str) -> None:
    value = "postgres://u:p%40ss@db.internal:5432/secrets" if name == "DATABASE_URL" else "s3cret value-" + "x" * 50
    (tmp_path / "secret").write_text(value + "\n")
    setting = {"SERVICE_SECRET_KEY": "SECRET_KEY"}.get(name, name)
    code = ("import project.settings as s; "
            f"print(s.DATABASES['default']['PASSWORD'] if {name!r} == 'DATABASE_URL' else s.{setting})")
    result = python(tmp_path, code, **{f"{name}_FILE": str(tmp_path / "secret")})
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("p@ss\n" if name == "DATABASE_URL" else value + "\n")


@pytest.mark.slow
@pytest.mark.parametrize("name", SECRET_SETTINGS)
def test_a_secret_setting_given_twice_missing_or_empty_stops_the_process_without_its_content(
        tmp_path: Path, name: str) -> None:
    secret = tmp_path / "secret"
    secret.write_text("sqlite:///tmp/x.db")
    both = python(tmp_path, "import project.settings", **{name: "sqlite:///tmp/y.db", f"{name}_FILE": str(secret)})
    assert f"ImproperlyConfigured: Set {name} or {name}_FILE, not both." in both.stderr
    missing = python(tmp_path, "import project.settings", **{f"{name}_FILE": str(tmp_path / "nowhere")})
    assert f"ImproperlyConfigured: {name}_FILE: cannot read {tmp_path / 'nowhere'} (No such file or directory)." \
        in missing.stderr
    secret.write_text("\n")
    empty = python(tmp_path, "import project.settings", **{f"{name}_FILE": str(secret)})
    assert f"ImproperlyConfigured: {name}_FILE: {secret} is empty." in empty.stderr
    assert "sqlite:///tmp" not in both.stderr + missing.stderr + empty.stderr


def _environment_reads(tree: ast.AST) -> dict[str, str]:
    """Each variable settings.py reads, with the reader (env_str, env_secret, ...)."""
    return {node.args[0].value: node.func.id for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("env_")
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)}


def test_every_setting_that_holds_a_secret_also_reads_a_file_and_is_documented_so() -> None:
    reads = _environment_reads(ast.parse((ROOT / "project" / "settings.py").read_text()))
    secret_words = ("KEY", "SECRET", "PASSWORD", "TOKEN", "CREDENTIAL", "DATABASE_URL")
    # Where server credentials may be sent (addresses), and a bound of jobs per key: no credential.
    not_secrets = {"SERVICE_CREDENTIAL_ADDRESSES", "SERVICE_JOBS_PER_KEY"}
    secret_like = {name for name in reads if any(word in name for word in secret_words)} - not_secrets
    assert secret_like >= set(SECRET_SETTINGS)
    assert {name: reads[name] for name in secret_like} == dict.fromkeys(secret_like, "env_secret")
    documented = (ROOT / "docs" / "configuration.md").read_text()
    assert all(f"`{name}_FILE`" in documented for name in secret_like)


# --- HTTPS in one switch ------------------------------------------------------------------------

HTTPS_NAMES = ["SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS",
               "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD", "SECURE_PROXY_SSL_HEADER",
               "SERVICE_BEHIND_PROXY"]


@pytest.mark.slow
def test_service_https_makes_cookies_secure_sets_hsts_and_trusts_the_proxys_scheme(tmp_path: Path) -> None:
    assert read_settings(tmp_path, HTTPS_NAMES, SERVICE_HTTPS="true") == {
        "SESSION_COOKIE_SECURE": True, "CSRF_COOKIE_SECURE": True, "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31_536_000, "SECURE_HSTS_INCLUDE_SUBDOMAINS": True, "SECURE_HSTS_PRELOAD": False,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"], "SERVICE_BEHIND_PROXY": True,
    }
    preload = read_settings(tmp_path, ["SECURE_HSTS_PRELOAD", "SILENCED_SYSTEM_CHECKS"], SERVICE_HTTPS="true",
                            SERVICE_HSTS_PRELOAD="true")
    assert preload == {"SECURE_HSTS_PRELOAD": True, "SILENCED_SYSTEM_CHECKS": []}


@pytest.mark.slow
def test_without_https_nothing_changes(tmp_path: Path) -> None:
    values = read_settings(tmp_path, HTTPS_NAMES[:6])
    assert values == {"SESSION_COOKIE_SECURE": False, "CSRF_COOKIE_SECURE": False, "SECURE_SSL_REDIRECT": False,
                      "SECURE_HSTS_SECONDS": 0, "SECURE_HSTS_INCLUDE_SUBDOMAINS": False, "SECURE_HSTS_PRELOAD": False}


@pytest.mark.slow
def test_https_without_the_proxy_is_refused_naming_both_settings(tmp_path: Path) -> None:
    result = python(tmp_path, "import project.settings", SERVICE_HTTPS="true", SERVICE_BEHIND_PROXY="false")
    assert "ImproperlyConfigured: SERVICE_HTTPS=true needs SERVICE_BEHIND_PROXY" in result.stderr


@override_settings(SECURE_SSL_REDIRECT=True, SESSION_COOKIE_SECURE=True, CSRF_COOKIE_SECURE=True,
                   SECURE_HSTS_SECONDS=31_536_000, SECURE_HSTS_INCLUDE_SUBDOMAINS=True,
                   SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"))
@pytest.mark.django_db
def test_over_https_the_admin_sets_secure_cookies_and_hsts_and_plain_http_is_redirected(api_key: str) -> None:
    client = Client()
    plain = client.get("/admin/login/")
    assert plain.status_code == 301 and plain["Location"] == "https://testserver/admin/login/"
    secure = client.get("/admin/login/", headers={"X-Forwarded-Proto": "https"})
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    assert secure.cookies["csrftoken"]["secure"] is True
    # /health answers a probe on the host without TLS.
    assert client.get("/health").status_code in (200, 503)


# --- The admin's networks -----------------------------------------------------------------------

def test_admin_networks_are_parsed_and_a_wrong_one_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_ADMIN_NETWORKS", "10.0.0.0/8, 192.0.2.7 ,2001:db8::/32")
    assert [str(n) for n in env_networks("SERVICE_ADMIN_NETWORKS")] == ["10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32"]
    monkeypatch.setenv("SERVICE_ADMIN_NETWORKS", "10.0.0.0/8,office")
    with pytest.raises(Exception, match=r"SERVICE_ADMIN_NETWORKS must be comma-separated networks.*not 'office'"):
        env_networks("SERVICE_ADMIN_NETWORKS")


@pytest.mark.django_db
def test_the_admin_answers_only_clients_in_the_listed_networks(settings: object, api_key: str) -> None:
    settings.SERVICE_ADMIN_NETWORKS = env_networks_of("10.0.0.0/8")  # type: ignore[attr-defined]
    client = Client()
    inside = client.get("/admin/login/", REMOTE_ADDR="10.1.2.3")
    outside = client.get("/admin/login/", REMOTE_ADDR="192.0.2.9")
    assert inside.status_code == 200
    assert outside.status_code == 403
    assert json.loads(outside.content)["detail"] == \
        "The admin is not available from this address (SERVICE_ADMIN_NETWORKS)."
    # The API stays open to every address (its key protects it).
    assert client.get("/health", REMOTE_ADDR="192.0.2.9").status_code in (200, 503)


@pytest.mark.django_db
def test_behind_the_proxy_the_admin_checks_the_forwarded_client_not_the_proxy(settings: object, api_key: str) -> None:
    settings.SERVICE_ADMIN_NETWORKS = env_networks_of("10.0.0.0/8")  # type: ignore[attr-defined]
    settings.SERVICE_BEHIND_PROXY = True  # type: ignore[attr-defined]
    client = Client()
    assert client.get("/admin/login/", REMOTE_ADDR="127.0.0.1",
                      headers={"X-Forwarded-For": "192.0.2.9"}).status_code == 403
    assert client.get("/admin/login/", REMOTE_ADDR="127.0.0.1",
                      headers={"X-Forwarded-For": "10.9.9.9"}).status_code == 200


def env_networks_of(value: str) -> tuple[object, ...]:
    os.environ["SERVICE_ADMIN_NETWORKS_TEST"] = value
    try:
        return env_networks("SERVICE_ADMIN_NETWORKS_TEST")
    finally:
        del os.environ["SERVICE_ADMIN_NETWORKS_TEST"]
