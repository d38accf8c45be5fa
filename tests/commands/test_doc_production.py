"""docs/operations.md's production steps, run as written on a fresh clone, in a temp root.

systemd: the install, secrets, settings, certificate and units steps, then the first admin, the
first named key used over HTTPS, and a backup. This machine has no systemd as PID 1 nor a spare
/etc: the host's paths (/opt/secretsapi, /etc/secretsapi, /srv/secrets, /var/lib/secretsapi,
/run/secretsapi, /etc/systemd/system, ...) are folders of the test, ``sudo`` runs the command as
the test's user (``-o``/``-g`` of ``install`` are dropped: the users are not created here), and
``systemctl enable --now`` starts each unit from the file the steps copied, as systemd would
(tests/commands/fake_systemctl.py), the proxy on a free port with the certificate the steps made.
The host's own setup (packages, users, the PostgreSQL role) is not run: the test's PostgreSQL
database stands for it.

Compose: the secrets and certificate step, then ``docker-compose config`` and ``check --deploy``
with what it made (no Docker daemon here to start the stack).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.commands.test_doc_shell_blocks import block
from tests.docsession import clean_env, explain, kill_group, run_session
from tests.processes.live import free_port
from tests.processes.live import pg_database as pg_database  # the fixture

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DOMAIN = "secrets.example.com"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / ".venv" / ".installed").exists(), reason="needs this checkout's installed .venv"),
]


def shims(folder: Path) -> Path:
    """``sudo`` and ``install`` as described above, and the emulated ``systemctl``."""
    folder.mkdir()
    (folder / "sudo").write_text('#!/bin/sh\nif [ "$1" = -u ]; then shift 2; fi\nexec "$@"\n')
    (folder / "install").write_text('#!/bin/bash\nargs=()\nwhile [ $# -gt 0 ]; do case "$1" in -o|-g) shift 2;; '
                                    '*) args+=("$1"); shift;; esac; done\nexec /usr/bin/install "${args[@]}"\n')
    (folder / "systemctl").write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "fake_systemctl.py"}" "$@"\n')
    for tool in folder.iterdir():
        tool.chmod(0o755)
    return folder


def host_paths(root: Path, clone: Path) -> dict[str, str]:
    return {"/opt/secretsapi": str(clone), "/etc/systemd/system": str(root / "systemd"),
            "/etc/secretsapi": str(root / "etc"), "/srv/secrets": str(root / "srv"),
            "/var/lib/secretsapi": str(root / "var-lib"), "/run/secretsapi": str(root / "run"),
            "/var/www/secretsapi-acme": str(root / "acme"), "/var/backups/secretsapi": str(root / "backups")}


@pytest.mark.postgres
def test_the_systemd_steps_serve_https_with_a_first_admin_a_first_key_and_a_backup(
        clone: Path, python_shim: Path, tmp_path: Path, pg_database: str) -> None:
    root = tmp_path / "host"
    (root / "systemd").mkdir(parents=True)
    paths = host_paths(root, clone)
    # The settings file the steps install names the host's paths too: the clone's copy names the test's.
    shipped = clone / "deploy" / "systemd" / "env"
    text = shipped.read_text()
    for host, here in paths.items():
        text = text.replace(host, here)
    shipped.write_text(text)
    port = free_port()
    pids = root / "pids"
    steps = [*block("docs/operations.md", "cd /opt/secretsapi && sudo make install bytecode").commands,
             *block("docs/operations.md", "manage() {").commands,
             *block("docs/operations.md", "sudo install -d -o secretsapi -g secretsapi -m 0700 /var/backups").commands]
    replace = {**paths, "postgres://secrets:$DB_PASSWORD@localhost:5432/secrets": pg_database,
               '"$DOMAIN:443:127.0.0.1"': f'"$DOMAIN:{port}:127.0.0.1"', '"https://$DOMAIN/': f'"https://$DOMAIN:{port}/',
               # No terminal here to type the password at: the same command, told it by the environment.
               "--email admin@example.com": "--email admin@example.com --noinput"}
    env = clean_env(python_shim, PATH=f"{shims(tmp_path / 'bin')}:{os.environ['PATH']}", DOMAIN=DOMAIN,
                    DB_PASSWORD="unused", DJANGO_SUPERUSER_PASSWORD="first-admin-pw-51c", FAKE_PIDS=str(pids),
                    FAKE_PROXY_PORT=str(port), FAKE_HOST_PATHS=json.dumps(paths))
    try:
        ran = run_session(steps, cwd=clone, env=env, logs=tmp_path / "logs", replace=replace, deadline_s=400)
        logs = "".join(path.read_text(errors="replace")[-3000:] for path in root.glob("*.log"))
        assert explain(ran) == "", logs
        listed = next(r for r in ran if r.command.text.startswith("curl -s --cacert"))
        assert isinstance(json.loads(listed.out), (list, dict)), listed.out  # the named key read the secrets
        backups = list((root / "backups").glob("*.tar.gz"))
        assert len(backups) == 1 and stat.S_IMODE(backups[0].stat().st_mode) == 0o600
        settings = {**{k: v for k, v in env.items() if not k.startswith("SERVICE_")}}
        for line in (root / "etc" / "env").read_text().splitlines():
            if line and not line.startswith("#"):
                key, _, value = line.partition("=")
                for host, here in paths.items():
                    value = value.replace(host, here)
                settings[key] = value
        admin = subprocess.run(
            [str(clone / ".venv" / "bin" / "python"), "manage.py", "shell", "-c",
             "from django.contrib.auth.models import User; print(User.objects.get(username='admin').is_superuser)"],
            cwd=clone, env=settings, capture_output=True, text=True, timeout=120, check=False)
        assert admin.stdout.strip().splitlines()[-1:] == ["True"], admin.stderr
    finally:
        for pid in (pids.read_text().split() if pids.exists() else []):
            kill_group(int(pid))


def test_the_compose_secrets_step_makes_what_the_compose_file_and_check_deploy_need(
        clone: Path, python_shim: Path, tmp_path: Path) -> None:
    root = tmp_path / "host"
    root.mkdir()
    paths = host_paths(root, clone)
    env = clean_env(python_shim, PATH=f"{shims(tmp_path / 'bin')}:{os.environ['PATH']}")
    ran = run_session(list(block("docs/operations.md", "export SERVICE_DOMAIN=").commands), cwd=clone, env=env,
                      logs=tmp_path / "logs", replace=paths)
    assert explain(ran) == ""
    secrets_folder = root / "etc" / "secrets"
    names = {"postgres_password", "database_url", "service_api_key", "service_secret_key"}
    assert {p.name for p in secrets_folder.iterdir()} == names
    assert all(stat.S_IMODE((secrets_folder / n).stat().st_mode) == 0o400 for n in names)
    assert (root / "etc" / "tls" / "privkey.pem").exists() and (root / "etc" / "tls" / "fullchain.pem").exists()
    compose = shutil.which("docker-compose")
    assert compose is not None, "docker-compose is not installed: .ci/run installs it"
    config = subprocess.run([compose, "-f", str(clone / "deploy" / "compose.yaml"), "config"], capture_output=True,
                            text=True, timeout=60, check=False,
                            env={**os.environ, "SERVICE_DOMAIN": DOMAIN, "SECRETSAPI_ETC": str(root / "etc")})
    assert config.returncode == 0, config.stderr
    web = yaml.safe_load(config.stdout)["services"]["web"]["environment"]
    settings = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "DATABASE_URL"))}
    settings.update({key: str(value).replace("/run/secrets", str(secrets_folder)) for key, value in web.items()})
    settings["SERVICE_DATA_DIR"] = str(tmp_path / "data")
    check = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT,
                           env=settings, capture_output=True, text=True, timeout=120, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    # The database's password is the one in the database's URL.
    password = (secrets_folder / "postgres_password").read_text().strip()
    assert (secrets_folder / "database_url").read_text().strip() == f"postgres://secrets:{password}@db:5432/secrets"
