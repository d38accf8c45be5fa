"""Every shell block of the README and the docs pages, run as a reader pastes it, in a fresh clone.

Each block is found by its page and its first command (``BLOCKS`` names the test that runs it), and
run with the texts a test must change and nothing else: ``localhost:8000`` becomes a free port, and
runs are bounded (``make test`` runs one test file here, this suite being what runs it; the
schemathesis block, run by tests/fuzz, gets a seed and a few examples per operation). Commands that
depend on each other (a key, then the server, then curl) run in one bash, line after line; a
failure names the page and line of the command that failed.

The blocks that set up a host (packages, system users, systemd units, PostgreSQL roles, Docker
images) are not run: they change the machine they run on and need what a test host lacks (systemd
as PID 1, a Docker daemon that can pull images). Each says so in the page, with why, in a mark
``<!-- not run: REASON -->`` on the line before it (tests/documentation.py), and ``NOT_RUN_COUNT``
counts them, so that a block left out is a choice made here too; every other block must be claimed
in ``BLOCKS`` (or its whole page in ``PAGES``). The PostgreSQL setup runs where the PostgreSQL tests
do (marked ``postgres``), with a role and database of its own, dropped afterwards.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import termios
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.docsession import Ran, clean_env, explain, kill_group, make_clone, run_session
from tests.documentation import Command, ShellBlock, shell_blocks
from tests.processes.live import free_port, migrated_sqlite, pg_rows, postgres_admin_url, wait_for

ROOT = Path(__file__).resolve().parents[2]
SESSION_DEADLINE_S = 240

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / ".venv" / ".installed").exists(), reason="needs this checkout's installed .venv"),
]

# Every shell block, by (page, the start of its first command), and the test that runs it.
BLOCKS = {
    ("README.md", "make serve"):
        "tests/commands/test_doc_shell_blocks.py::"
        "test_make_serve_runs_the_api_and_a_worker_until_ctrl_c_and_make_test_runs_tests",
    ("README.md", "export SERVICE_API_KEY=$(make -s key)"):
        "tests/commands/test_readme.py::test_the_curl_session_works_verbatim_on_a_fresh_clone",
    ("docs/api.md", "curl -s -H \"X-API-Key: $SERVICE_API_KEY\" -H 'Accept: application/x-ndjson'"):
        "tests/commands/test_doc_shell_blocks.py::test_the_export_block_saves_the_failed_rows_as_json_lines",
    ("docs/commands.md", "export SECRETSCTL_ADDR=http://localhost:8000"):
        "tests/commands/test_doc_shell_blocks.py::test_the_remote_command_line_block_logs_in_syncs_and_audits",
    ("docs/projects.md", "mkdir -p payments"):
        "tests/commands/test_doc_shell_blocks.py::test_the_projects_block_serves_a_second_project_and_confines_its_key",
    ("docs/projects.md", ".venv/bin/python manage.py apikey create ci-two"):
        "tests/commands/test_doc_shell_blocks.py::test_the_projects_block_serves_a_second_project_and_confines_its_key",
    ("docs/api.md", ".venv/bin/python manage.py createsuperuser"):
        "tests/commands/test_doc_shell_blocks.py::"
        "test_createsuperuser_at_a_terminal_makes_a_superuser_with_the_password_typed",
    ("docs/operations.md", ".venv/bin/python manage.py health"):
        "tests/commands/test_doc_shell_blocks.py::test_the_health_command_exits_0_when_the_database_answers",
    ("docs/operations.md", ".venv/bin/python manage.py serve"):
        "tests/commands/test_doc_shell_blocks.py::test_the_production_layout_serves_and_runs_jobs_and_stops_on_sigterm",
    ("docs/operations.md", "sudo -u postgres psql"):
        "tests/commands/test_doc_shell_blocks.py::test_the_postgresql_setup_block_serves_from_the_new_database",
    ("docs/operations.md", "cd /opt/secretsapi && sudo make install bytecode"):
        "tests/commands/test_doc_production.py::"
        "test_the_systemd_steps_serve_https_with_a_first_admin_a_first_key_and_a_backup",
    ("docs/operations.md", "manage() {"):
        "tests/commands/test_doc_production.py::"
        "test_the_systemd_steps_serve_https_with_a_first_admin_a_first_key_and_a_backup",
    ("docs/operations.md", "sudo install -d -o secretsapi -g secretsapi -m 0700 /var/backups"):
        "tests/commands/test_doc_production.py::"
        "test_the_systemd_steps_serve_https_with_a_first_admin_a_first_key_and_a_backup",
    ("docs/operations.md", "export SERVICE_DOMAIN="):
        "tests/commands/test_doc_production.py::"
        "test_the_compose_secrets_step_makes_what_the_compose_file_and_check_deploy_need",
    ("docs/definitions.md", ".venv/bin/python manage.py validate --definition examples/provider-tokens.yml"):
        "tests/commands/test_doc_shell_blocks.py::test_the_provider_tokens_example_validates_without_calling_a_vendor",
    ("docs/credentials.md", "export ADMIN_URL="):
        "tests/commands/test_doc_credentials.py::test_the_credentials_example_rotates_reports_drift_and_repairs",
    # Against the server of a richer definition than the example's, with more examples.
    ("docs/operations.md", ".venv/bin/schemathesis run"):
        "tests/fuzz/test_schemathesis_cli.py::test_schemathesis_with_every_check_and_phase_finds_nothing",
}
# Pages whose every shell block one test runs, in order.
PAGES = {
    "docs/first-secretfile.md":
        "tests/commands/test_doc_first_secretfile.py::test_the_first_secretfile_page_runs_step_by_step_as_shown",
}
# The blocks marked `<!-- not run: REASON -->` in the pages (host set-up, certbot, compose, the suite itself).
NOT_RUN_COUNT = 4


def block(page: str, first: str) -> ShellBlock:
    (found,) = [b for b in shell_blocks() if b.page == page and b.commands[0].text.startswith(first)]
    return found


def command(page: str, first: str) -> Command:
    """The one command of ``page`` that starts with ``first``."""
    (found,) = [c for b in shell_blocks() if b.page == page for c in b.commands if c.text.startswith(first)]
    return found


def test_every_shell_block_is_run_by_a_test_or_marked_with_why_it_is_not() -> None:
    not_run = []
    for each in shell_blocks():
        owners = [key for key in BLOCKS if key[0] == each.page and each.commands[0].text.startswith(key[1])]
        claims = len(owners) + (each.page in PAGES) + (each.not_run is not None)
        assert claims == 1, (f"{each.where}: the shell block {each.commands[0].text!r} must be run by one test "
                             f"(BLOCKS: {owners}, PAGES: {each.page in PAGES}) or marked not run ({each.not_run!r})")
        if each.not_run is not None:
            assert len(each.not_run.split()) >= 5, f"{each.where}: say why it is not run, not {each.not_run!r}"
            not_run.append(each.where)
    assert len(not_run) == NOT_RUN_COUNT, f"blocks marked not run: {not_run}"
    for page, first in BLOCKS:
        block(page, first)  # each claim names exactly one block
    for runner in [*BLOCKS.values(), *PAGES.values()]:
        path, _, name = runner.partition("::")
        assert f"\ndef {name}(" in (ROOT / path).read_text(encoding="utf-8"), f"no test {runner}"


@pytest.fixture
def started(tmp_path: Path) -> Path:
    """A clone as ``make serve``'s first start leaves it: compiled (``make bytecode``), its database
    migrated (copies of this checkout's modules and of a migrated database, tests/processes/live.py:
    ~4.5 s of CPU less than doing both), for the tests of the commands run once a server has
    started; test_make_serve_... runs ``make serve`` on a fresh clone."""
    clone = make_clone(tmp_path, bytecode=True)
    migrated_sqlite(clone / "data" / "service.sqlite3")
    return clone


@pytest.fixture
def installed(started: Path, python_shim: Path) -> Path:
    """``started`` after ``make install`` (its virtualenv: ``make serve``'s first step)."""
    subprocess.run(["make", "-s", "install"], cwd=started, env=clean_env(python_shim), check=True, timeout=120)
    return started


def readme_server_prelude() -> list[Command]:
    """The README's first three lines of its curl session: a key, ``make serve &``, wait for /health."""
    return [command("README.md", "export SERVICE_API_KEY=$(make -s key)"), command("README.md", "make serve &"),
            command("README.md", "until curl -sf localhost:8000/health")]


def session(clone: Path, python_shim: Path, commands: list[Command], logs: Path, **env: str) -> list[Ran]:
    """``commands`` in one bash in the clone, the server's port a free one."""
    port = free_port()
    return run_session(commands, cwd=clone, env=clean_env(python_shim, SERVICE_PORT=str(port), **env), logs=logs,
                       replace={"localhost:8000": f"localhost:{port}", "127.0.0.1:8000": f"127.0.0.1:{port}"},
                       deadline_s=SESSION_DEADLINE_S)


def test_make_serve_runs_the_api_and_a_worker_until_ctrl_c_and_make_test_runs_tests(
        clone: Path, python_shim: Path) -> None:
    serve, test = block("README.md", "make serve").commands
    port = free_port()
    key = secrets.token_urlsafe(32)
    server = subprocess.Popen(["bash", "-c", serve.text], cwd=clone, start_new_session=True,
                              env=clean_env(python_shim, SERVICE_PORT=str(port), SERVICE_API_KEY=key),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for(f"http://127.0.0.1:{port}/health", deadline_s=120)
        status, body = _post(port, "/sync", key)  # a job: the worker beside the API runs it
        assert status == 200 and "db_password" in body["secrets_generated"], (serve.where, body)
        os.killpg(server.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole foreground group
        assert server.wait(timeout=60) is not None
        assert _group_gone(server.pid), f"{serve.where}: processes left after Ctrl-C"
    finally:
        kill_group(server.pid)

    # The whole suite is what runs this test: `make test` runs one file of it here.
    done = subprocess.run(["bash", "-c", test.text], cwd=clone, capture_output=True, text=True, timeout=300,
                          env=clean_env(python_shim, PYTEST_ADDOPTS="-p no:randomly -n 0 tests/test_layering.py"))
    assert done.returncode == 0 and " passed" in done.stdout, f"{test.where}: {done.stdout[-2000:]}{done.stderr}"


def test_the_export_block_saves_the_failed_rows_as_json_lines(started: Path, python_shim: Path,
                                                               tmp_path: Path) -> None:
    export = block("docs/api.md", "curl -s -H \"X-API-Key: $SERVICE_API_KEY\" -H 'Accept: application/x-ndjson'")
    refused = command("README.md", "curl -si -H 'X-API-Key: wrong'")  # a failure for the export to find
    ran = session(started, python_shim, [*readme_server_prelude(), refused, *export.commands], tmp_path / "logs")
    assert explain(ran) == ""
    rows = [json.loads(line) for line in (started / "failures.jsonl").read_text().splitlines()]
    assert rows and all(row["success"] is False for row in rows)
    assert any(row["action"] == "authenticate" for row in rows), rows


def test_the_remote_command_line_block_logs_in_syncs_and_audits(started: Path, python_shim: Path,
                                                                tmp_path: Path) -> None:
    remote = block("docs/commands.md", "export SECRETSCTL_ADDR=http://localhost:8000")
    config = tmp_path / "config"  # the stored login goes there, not under the tests' user's home
    ran = session(started, python_shim, [*readme_server_prelude(), *remote.commands], tmp_path / "logs",
                  XDG_CONFIG_HOME=str(config), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    assert explain(ran) == ""
    whoami = next(r for r in ran if r.command.text.endswith("whoami"))
    audit = next(r for r in ran if "audit -n 5" in r.command.text)
    assert "Key name:  service" in whoami.out and "  sync  " in audit.out and "service" in audit.out, audit.out
    assert not (config / "secretsctl/credentials.json").exists()  # logout removed it


def test_the_projects_block_serves_a_second_project_and_confines_its_key(started: Path, python_shim: Path,
                                                                         tmp_path: Path) -> None:
    projects = block("docs/projects.md", "mkdir -p payments").commands
    limits = block("docs/projects.md", ".venv/bin/python manage.py apikey create ci-two").commands
    ran = session(started, python_shim, [*readme_server_prelude(), *projects, *limits], tmp_path / "logs")
    assert explain(ran) == ""
    assert (started / "payments" / ".gitsecrets.lock").is_file()
    assert not (started / "examples" / ".gitsecrets.lock").exists()
    confined = ran[len(ran) - len(limits) - 1]
    assert confined.out.strip().endswith("404"), confined
    listed = [line.split("\t") for line in ran[-1].out.splitlines()]
    assert [row[-1] for row in listed if row[0] == "ci-two"] == ["payments"], ran[-1].out


def test_createsuperuser_at_a_terminal_makes_a_superuser_with_the_password_typed(
        installed: Path, python_shim: Path) -> None:
    (create,) = block("docs/api.md", ".venv/bin/python manage.py createsuperuser").commands
    password = secrets.token_urlsafe(18)
    answers = {"Username": "auditor", "Email address": "auditor@example.com", "Password (again)": password,
               "Password": password}
    transcript, code = _at_a_terminal(create.text, installed, clean_env(python_shim), answers)
    assert code == 0, f"{create.where}: exited {code}:\n{transcript}"
    assert "Superuser created successfully." in transcript, transcript
    check = subprocess.run(
        [".venv/bin/python", "manage.py", "shell", "-c",
         "import sys; from django.contrib.auth.models import User; u = User.objects.get(username='auditor'); "
         "print(u.is_superuser and u.is_staff and u.check_password(sys.stdin.read()))"],
        cwd=installed, env=clean_env(python_shim), input=password, capture_output=True, text=True, timeout=60)
    assert check.stdout.strip().splitlines()[-1:] == ["True"], check.stdout + check.stderr


def test_the_production_layout_serves_and_runs_jobs_and_stops_on_sigterm(installed: Path, python_shim: Path) -> None:
    serve, worker = block("docs/operations.md", ".venv/bin/python manage.py serve").commands
    port = free_port()
    key = secrets.token_urlsafe(32)
    # "All with the same environment": the key, the definition, the port.
    env = clean_env(python_shim, SERVICE_PORT=str(port), SERVICE_API_KEY=key, SERVICE_CONFIG="examples/Secretfile.yml")
    # Each under its own supervisor: its own process, its own group.
    procs = [subprocess.Popen(["bash", "-c", each.text], cwd=installed, env=env, start_new_session=True,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for each in (serve, worker)]
    try:
        wait_for(f"http://127.0.0.1:{port}/health", deadline_s=120)
        status, body = _post(port, "/sync", key)
        assert status == 200 and "db_password" in body["secrets_generated"], (worker.where, body)
        for each, proc in zip((serve, worker), procs, strict=True):
            proc.send_signal(signal.SIGTERM)  # what a supervisor sends its main process
            assert proc.wait(timeout=60) is not None
            assert _group_gone(proc.pid), f"{each.where}: processes left after SIGTERM"
    finally:
        for proc in procs:
            kill_group(proc.pid)


def test_the_health_command_exits_0_when_the_database_answers(installed: Path, python_shim: Path) -> None:
    (health,) = block("docs/operations.md", ".venv/bin/python manage.py health").commands
    done = subprocess.run(["bash", "-c", health.text], cwd=installed, env=clean_env(python_shim), capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "database: up"), (health.where, done.stderr)


def test_the_provider_tokens_example_validates_without_calling_a_vendor(clone: Path, python_shim: Path) -> None:
    (check,) = block("docs/definitions.md", ".venv/bin/python manage.py validate --definition examples/").commands
    (clone / ".venv").symlink_to(ROOT / ".venv")  # validating installs nothing: this checkout's virtualenv
    done = subprocess.run(["bash", "-c", check.text], cwd=clone, env=clean_env(python_shim), capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "Valid."), (check.where, done.stdout, done.stderr)


@pytest.mark.postgres
def test_the_postgresql_setup_block_serves_from_the_new_database(clone: Path, python_shim: Path,
                                                                  tmp_path: Path) -> None:
    """Run where the PostgreSQL tests run (TEST_DATABASE_URL names the server), as root or with sudo.

    Changed: the role's and database's name (one of this test's, dropped at the end), the host
    ``db.internal`` (this server's), ``0.0.0.0`` (tests listen on loopback only), and ``serve``
    runs in the background so that the session can read /health and the audit log through it."""
    server = urlsplit(postgres_admin_url())
    if os.geteuid() != 0 and (shutil.which("sudo") is None
                              or subprocess.run(["sudo", "-n", "true"], capture_output=True, check=False).returncode):
        pytest.skip("acting as the postgres user needs root or sudo without a password")
    tools = tmp_path / "bin"
    tools.mkdir()
    if shutil.which("sudo") is None:
        # Root without sudo installed: runuser is what `sudo -u USER command` does for root.
        (tools / "sudo").write_text('#!/bin/sh\n[ "$1" = -u ] || exit 64\nuser=$2\nshift 2\n'
                                    'exec runuser -u "$user" -- "$@"\n')
        (tools / "sudo").chmod(0o755)
    setup = block("docs/operations.md", "sudo -u postgres psql")
    name = f"docs_{secrets.token_hex(4)}"
    port = free_port()
    health = Command("(test)", 0, f"until curl -sf localhost:{port}/health; do sleep 1; done")
    read = Command("(test)", 0, f'curl -sf -H "X-API-Key: $SERVICE_API_KEY" localhost:{port}/audit/logs')
    env = clean_env(python_shim, SERVICE_PORT=str(port), PGPORT=str(server.port or 5432),
                    PATH=f"{tools}:{os.environ['PATH']}")
    try:
        ran = run_session([*setup.commands, health, read], cwd=clone, env=env, logs=tmp_path / "logs",
                          deadline_s=SESSION_DEADLINE_S, replace={
                              "ROLE secrets ": f"ROLE {name} ", "DATABASE secrets OWNER secrets": f"DATABASE {name} "
                              f"OWNER {name}", "secrets:change-me@db.internal:5432/secrets":
                              f"{name}:change-me@{server.hostname}:{server.port or 5432}/{name}",
                              "--host 0.0.0.0": "--host 127.0.0.1", "--workers 4": "--workers 4 &"})
        assert explain(ran) == ""
        url = f"postgres://{name}:change-me@{server.hostname}:{server.port or 5432}/{name}"
        assert pg_rows(url, "SELECT count(*) FROM audit_auditentry WHERE action = 'read_audit_logs'") == [(1,)]
    finally:
        for sql in (f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'DROP ROLE IF EXISTS "{name}"'):
            subprocess.run(["sudo", "-u", "postgres", "psql", "-qc", sql], env=env, capture_output=True,
                           timeout=60, check=False)


def _post(port: int, path: str, key: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=b"{}", method="POST",
                                     headers={"X-API-Key": key, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.status, json.loads(response.read())


def _group_gone(pgid: int, deadline_s: float = 30) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _at_a_terminal(text: str, cwd: Path, env: dict[str, str], answers: dict[str, str],
                   deadline_s: float = 120) -> tuple[str, int]:
    """Run ``text`` in bash on a new pseudo-terminal (its controlling terminal, as in a terminal
    window), answering each prompt that starts with a key of ``answers``; the transcript and exit code."""
    primary, secondary = os.openpty()

    def controlling_terminal() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(["bash", "-c", text], cwd=cwd, env={**env, "TERM": "dumb"}, stdin=secondary,
                            stdout=secondary, stderr=secondary, start_new_session=True,
                            preexec_fn=controlling_terminal)  # the child only makes the terminal its own
    os.close(secondary)
    transcript = ""
    pending = ""
    end = time.monotonic() + deadline_s
    try:
        while time.monotonic() < end:
            ready, _, _ = select.select([primary], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(primary, 4096).decode(errors="replace")
                except OSError:  # the terminal closed: the command ended
                    break
                if not chunk:
                    break
                transcript += chunk
                pending += chunk
                prompt = pending.rstrip().rsplit("\n", 1)[-1].strip()
                if prompt.endswith(":"):
                    answer = next((a for p, a in answers.items() if prompt.startswith(p)), None)
                    assert answer is not None, f"unexpected prompt {prompt!r}:\n{transcript}"
                    os.write(primary, answer.encode() + b"\n")
                    pending = ""
            elif proc.poll() is not None:
                break
        return transcript, proc.wait(timeout=max(1.0, end - time.monotonic()))
    finally:
        os.close(primary)
        kill_group(proc.pid)
