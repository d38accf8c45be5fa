"""The production layout in deploy/: each file passes its tool's own checker (``nginx -t``,
``systemd-analyze verify`` and ``security``, ``docker-compose config``), holds what operations
rely on (TLS, secrets from files, healthchecks, the socket the proxy shares with the API), and
the settings it gives pass ``manage.py check --deploy``. The proxy is also run for real:
tests/security/test_tls_proxy.py and test_proxy.py.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.processes.live import ROOT, free_port
from tests.processes.proxy import derive_config

DEPLOY = ROOT / "deploy"
UNITS = sorted(path.name for path in (DEPLOY / "systemd").glob("*.service"))
SECRET_NAMES = ("SERVICE_API_KEY", "SERVICE_SECRET_KEY", "DATABASE_URL")


def tool(name: str) -> str:
    path = shutil.which(name) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists() else None)
    assert path is not None, f"{name} is not installed: .ci/run installs it (Debian's package)"
    return path


def unit(name: str) -> dict[str, list[str]]:
    """A unit file's ``[Service]`` settings: each key with its values in order."""
    settings: dict[str, list[str]] = {}
    section = ""
    for line in (DEPLOY / "systemd" / name).read_text().splitlines():
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            settings.setdefault(key, []).append(value)
    return settings


def unit_environment(name: str) -> dict[str, str]:
    """What a unit runs with: the shipped /etc/secretsapi/env (deploy/systemd/env), then its ``Environment=``."""
    assert unit(name)["EnvironmentFile"] == ["/etc/secretsapi/env"]
    env: dict[str, str] = {}
    for line in (DEPLOY / "systemd" / "env").read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key] = value
    for line in unit(name).get("Environment", []):
        for item in line.split():
            key, _, value = item.partition("=")
            env[key] = value
    return env


# --- The proxy ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_shipped_nginx_config_passes_nginx_t_with_a_certificate_in_place(tmp_path: Path) -> None:
    conf = derive_config(tmp_path, port=free_port(), http_port=free_port(), upstream_socket=tmp_path / "web.sock")
    result = subprocess.run([tool("nginx"), "-t", "-p", str(tmp_path), "-c", str(conf), "-e", "stderr"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr


@pytest.mark.slow
def test_the_proxy_runs_with_only_the_capabilities_its_unit_keeps(tmp_path: Path) -> None:
    """nginx as the unit runs it: root, with CapabilityBoundingSet= alone, workers as www-data; it
    reads the root-only TLS key and answers over TLS (502 here: no API behind it)."""
    assert os.geteuid() == 0, "runs where CI runs, as root: nginx's master starts as root"
    caps = unit("secretsapi-proxy.service")["CapabilityBoundingSet"][0].split()
    folder = tmp_path / "nginx"
    folder.mkdir()
    port = free_port()
    conf = derive_config(folder, port=port, http_port=free_port(), upstream_port=free_port())
    conf.write_text(conf.read_text().replace("user root;", "user www-data;"))
    bounding = ",".join(["-all", *(f"+{cap.removeprefix('CAP_').lower()}" for cap in caps)])
    proc = subprocess.Popen([tool("setpriv"), f"--bounding-set={bounding}", "--inh-caps=-all", tool("nginx"), "-p",
                             str(folder), "-c", str(conf), "-e", "stderr", "-g", "daemon off;"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        for _ in range(100):
            answer = subprocess.run(
                ["curl", "-sS", "--cacert", str(folder / "tls" / "ca.pem"), "--resolve", f"localhost:{port}:127.0.0.1",
                 "-w", " %{http_code}", f"https://localhost:{port}/health"], capture_output=True, text=True, timeout=30)
            if answer.stdout.endswith(" 502") or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert answer.stdout.endswith(" 502") and '"error": "Bad gateway"' in answer.stdout, answer.stderr
        workers = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        owners = {Path(f"/proc/{pid}").stat().st_uid for pid in workers}
        assert owners == {int(subprocess.run(["id", "-u", "www-data"], capture_output=True, text=True).stdout)}
    finally:
        os.killpg(proc.pid, 9)
        proc.wait(timeout=30)


def test_the_compose_proxy_runs_a_supported_nginx() -> None:
    image = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]["proxy"]["image"]
    match = re.fullmatch(r"nginx:1\.(\d+)(?:\.\d+)?-alpine", image)
    # nginx supports its current stable (even) and mainline (odd) branches: 1.30 and 1.31 now.
    assert match is not None and int(match[1]) >= 30, image


# --- systemd ---------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", UNITS)
def test_each_systemd_unit_passes_systemd_analyze_verify(name: str) -> None:
    result = subprocess.run([tool("systemd-analyze"), "verify", "--man=no", str(DEPLOY / "systemd" / name)],
                            capture_output=True, text=True, timeout=60, check=False)
    # The only finding allowed: the install folder of docs/operations.md is not on this machine.
    findings = [line for line in result.stderr.splitlines()
                if line.strip() and "/opt/secretsapi/.venv/bin/python is not executable" not in line]
    assert findings == []


@pytest.mark.slow
@pytest.mark.parametrize("name", UNITS)
def test_each_unit_scores_2_5_or_lower_in_systemd_analyze_security(name: str) -> None:
    result = subprocess.run(
        [tool("systemd-analyze"), "security", "--offline=yes", "--threshold=25", str(DEPLOY / "systemd" / name)],
        capture_output=True, text=True, timeout=60, check=False)
    score = re.search(r"Overall exposure level for \S+: (\d+\.\d)", result.stdout)
    assert score is not None, result.stdout + result.stderr
    assert float(score[1]) <= 2.5 and result.returncode == 0, result.stdout


@pytest.mark.parametrize("name", ["secretsapi-web.service", "secretsapi-worker.service"])
def test_the_service_units_read_their_secrets_from_files_never_from_the_environment(name: str) -> None:
    env = unit_environment(name)
    assert {key: env.get(f"{key}_FILE") for key in SECRET_NAMES} == {
        "SERVICE_API_KEY": "/etc/secretsapi/secrets/service_api_key",
        "SERVICE_SECRET_KEY": "/etc/secretsapi/secrets/service_secret_key",
        "DATABASE_URL": "/etc/secretsapi/secrets/database_url"}
    assert not set(SECRET_NAMES) & set(env)
    assert env["SERVICE_HTTPS"] == "true" and env["SERVICE_DATA_DIR"] == "/var/lib/secretsapi"


def test_the_web_unit_listens_on_the_socket_the_proxy_config_names() -> None:
    env = unit_environment("secretsapi-web.service")
    assert unit("secretsapi-web.service")["RuntimeDirectory"] == ["secretsapi"]
    assert f"server unix:{env['SERVICE_SOCKET']};" in (DEPLOY / "nginx" / "secretsapi.conf").read_text()


# --- Docker ----------------------------------------------------------------------------------------

def compose_config(tmp_path: Path, **given: str) -> dict[str, Any]:
    env = {**os.environ, "SERVICE_DOMAIN": "secrets.example.com", "SECRETSAPI_ETC": str(tmp_path / "etc"), **given}
    result = subprocess.run([tool("docker-compose"), "-f", str(DEPLOY / "compose.yaml"), "config"],
                            capture_output=True, text=True, timeout=60, check=False, env=env)
    assert result.returncode == 0, result.stderr
    return dict(yaml.safe_load(result.stdout))


@pytest.mark.slow
def test_the_compose_file_passes_docker_compose_config(tmp_path: Path) -> None:
    assert sorted(compose_config(tmp_path)["services"]) == ["db", "proxy", "web", "worker"]


@pytest.mark.slow
def test_compose_needs_the_service_domain(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SERVICE_DOMAIN"}
    result = subprocess.run([tool("docker-compose"), "-f", str(DEPLOY / "compose.yaml"), "config"],
                            capture_output=True, text=True, timeout=60, check=False, env=env)
    assert result.returncode != 0 and "set SERVICE_DOMAIN" in result.stderr


@pytest.mark.slow
def test_compose_takes_every_secret_from_a_file_outside_the_repository(tmp_path: Path) -> None:
    config = compose_config(tmp_path)
    files = {name: Path(spec["file"]) for name, spec in config["secrets"].items()}
    assert files == {name: tmp_path / "etc" / "secrets" / name
                     for name in ("service_api_key", "service_secret_key", "database_url", "postgres_password")}
    for name in ("web", "worker"):
        environment = config["services"][name]["environment"]
        assert not set(SECRET_NAMES) & set(environment), name
        assert {environment[f"{key}_FILE"] for key in SECRET_NAMES} == {
            f"/run/secrets/{secret}" for secret in ("service_api_key", "service_secret_key", "database_url")}
        assert {s["source"] for s in config["services"][name]["secrets"]} == {
            "service_api_key", "service_secret_key", "database_url"}
    assert config["services"]["db"]["environment"]["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"
    assert "POSTGRES_PASSWORD" not in config["services"]["db"]["environment"]
    # By default, the host's /etc: never the checkout.
    env = {k: v for k, v in os.environ.items() if k != "SECRETSAPI_ETC"}
    result = subprocess.run([tool("docker-compose"), "-f", str(DEPLOY / "compose.yaml"), "config"], env={
        **env, "SERVICE_DOMAIN": "secrets.example.com"}, capture_output=True, text=True, timeout=60, check=False)
    defaults = yaml.safe_load(result.stdout)
    assert {spec["file"] for spec in defaults["secrets"].values()} == {
        f"/etc/secretsapi/secrets/{name}" for name in files}


@pytest.mark.slow
def test_compose_web_and_proxy_meet_on_a_shared_socket_not_a_shared_network(tmp_path: Path) -> None:
    services = compose_config(tmp_path)["services"]
    assert all("network_mode" not in service for service in services.values())
    mounts = {name: {v.split(":")[1]: v.split(":")[0] for v in service.get("volumes", [])}
              for name, service in services.items()}
    assert mounts["web"]["/run/secretsapi"] == mounts["proxy"]["/run/secretsapi"] == "run"
    assert services["web"]["command"][-2:] == ["--socket", "/run/secretsapi/web.sock"]
    assert services["proxy"]["depends_on"] == {"web": {"condition": "service_healthy"}}
    assert services["proxy"]["ports"] == [{"published": 80, "target": 80}, {"published": 443, "target": 443}]
    assert mounts["proxy"]["/etc/nginx/secretsapi"] == str(DEPLOY / "nginx")
    assert mounts["proxy"]["/etc/secretsapi/tls"] == str(tmp_path / "etc" / "tls")


@pytest.mark.slow
def test_every_compose_service_has_a_healthcheck_and_waits_for_what_it_needs(tmp_path: Path) -> None:
    services = compose_config(tmp_path)["services"]
    tests = {name: service["healthcheck"]["test"] for name, service in services.items()}
    assert tests["web"] == ["CMD", "python", "manage.py", "health"]
    assert tests["worker"] == ["CMD", "python", "manage.py", "health", "--worker"]
    assert tests["proxy"][:2] == ["CMD", "curl"] and tests["proxy"][-1] == "https://secrets.example.com/health"
    assert tests["db"][:2] == ["CMD", "pg_isready"]
    for name in ("web", "worker"):
        assert services[name]["depends_on"] == {"db": {"condition": "service_healthy"}}
        assert services[name]["environment"]["SERVICE_HTTPS"] == "true"
        assert services[name]["environment"]["SERVICE_ALLOWED_HOSTS"] == "secrets.example.com"


def _copied() -> set[str]:
    copied: set[str] = set()
    for line in (DEPLOY / "Dockerfile").read_text().splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not words[1].startswith("--from"):
            copied.update(source.rstrip("/") for source in words[1:-1])
    return copied


def test_the_image_copies_every_package_the_service_runs_and_nothing_missing() -> None:
    """No Docker daemon is needed to check what the Dockerfile takes from the repository."""
    copied = _copied()
    assert all((ROOT / source).exists() for source in copied), copied
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests", "bench"}
    assert packages <= copied
    assert {"manage.py", "requirements.txt", "requirements-cloud.txt"} <= copied


def test_the_build_context_lets_through_everything_the_image_copies() -> None:
    lines = [line.strip() for line in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()]
    allowed = {line.removeprefix("!").rstrip("/") for line in lines if line.startswith("!")}
    assert lines[lines.index("*") + 1:] and _copied() <= allowed


def test_the_image_checks_its_health_and_serves_on_the_socket() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert 'HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["python", "manage.py", ' \
           '"health"]' in text
    assert 'CMD ["python", "manage.py", "serve", "--socket", "/run/secretsapi/web.sock"]' in text
    assert "USER secretsapi" in text and "compileall" in text


# --- The settings production runs with -----------------------------------------------------------------

def _secret_files(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "service_api_key").write_text(secrets.token_urlsafe(32) + "\n")
    (folder / "service_secret_key").write_text(secrets.token_urlsafe(50) + "\n")
    (folder / "database_url").write_text("postgres://secrets:pw@db.internal:5432/secrets\n")
    return folder


def _check_deploy(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "DATABASE_URL"))}
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT,
                          env={**base, "SERVICE_DATA_DIR": str(tmp_path / "data"), **env},
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.slow
def test_check_deploy_is_clean_under_the_compose_settings(tmp_path: Path) -> None:
    credentials = _secret_files(tmp_path / "run-secrets")
    environment = compose_config(tmp_path)["services"]["web"]["environment"]
    env = {key: str(value).replace("/run/secrets", str(credentials)) for key, value in environment.items()}
    result = _check_deploy(env, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (1 silenced)." in result.stdout


@pytest.mark.slow
def test_check_deploy_is_clean_under_the_systemd_settings(tmp_path: Path) -> None:
    credentials = _secret_files(tmp_path / "credentials")
    env = {key: value.replace("/etc/secretsapi/secrets", str(credentials))
           for key, value in unit_environment("secretsapi-web.service").items()}
    env["SERVICE_DATA_DIR"] = str(tmp_path / "data")
    result = _check_deploy(env, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (1 silenced)." in result.stdout


@pytest.mark.slow
def test_without_https_check_deploy_names_the_cookie_hsts_and_redirect_warnings(tmp_path: Path) -> None:
    result = _check_deploy({"SERVICE_SECRET_KEY": secrets.token_urlsafe(50)}, tmp_path)
    found = set(re.findall(r"\(security\.(W\d+)\)", result.stdout + result.stderr))
    assert found == {"W004", "W008", "W012", "W016"}


# --- Healthchecks, run as the containers run them (`manage.py health`: the jobs' part) -----------------

@pytest.mark.slow
def test_the_web_and_worker_healthchecks_answer_as_those_parts_do(tmp_path: Path) -> None:
    from tests.processes.live import migrated_sqlite, server_env, write_definition

    services = compose_config(tmp_path)["services"]
    web, worker = (services[name]["healthcheck"]["test"][1:] for name in ("web", "worker"))
    assert web[0] == worker[0] == "python"
    config = write_definition(tmp_path, {"version": "1.0", "secrets": []})
    env = server_env(data_dir=tmp_path / "data", config=config)

    def check(command: list[str]) -> int:
        return subprocess.run([sys.executable, *command[1:]], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=120, check=False).returncode

    migrated_sqlite(tmp_path / "data" / "service.sqlite3")
    assert check(web) == 0
    assert check(worker) != 0  # no job worker runs
    running = subprocess.Popen([sys.executable, "manage.py", "worker"], cwd=ROOT, env=env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 90
        while check(worker) != 0:
            assert time.monotonic() < end and running.poll() is None, "the worker's healthcheck never passed"
            time.sleep(1)
    finally:
        os.killpg(running.pid, 15)
        running.wait(timeout=60)
