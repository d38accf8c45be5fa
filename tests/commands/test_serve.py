"""``manage.py serve`` as a real gunicorn process, and the gunicorn config it runs with.

The servers start on a migrated database (a copy, tests/processes/live.py: ~2.5 s of CPU less per
start); tests/processes/test_migrations_on_start.py is about ``serve`` migrating a new one."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from secretsapi.management.commands import serve as serve_command
from tests.processes.live import START_DEADLINE_S, free_port, http, migrated_sqlite, wait_for

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "project" / "gunicorn.conf.py"


def clean_env(tmp_path: Path, **given: str) -> dict[str, str]:
    """The parent's environment less every service setting, then exactly the ones given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    return {**env, "SERVICE_DATA_DIR": str(tmp_path / "data"), **given}


def serve_until_healthy(args: list[str], env: dict[str, str], port: int) -> tuple[str, int | None]:
    """Run ``manage.py serve`` until /health answers, then stop it with SIGTERM: (output, exit code)."""
    proc = subprocess.Popen([sys.executable, "manage.py", "serve", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/health", deadline_s=START_DEADLINE_S)
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    return output, proc.returncode


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = free_port()
    env = {
        **os.environ,
        "SERVICE_DATA_DIR": str(tmp_path / "data"),
        "SERVICE_API_KEY": "serve-test-key",
        "SERVICE_CONFIG": str(ROOT / "examples" / "Secretfile.yml"),
        "SERVICE_LOCKFILE": str(tmp_path / "lock.json"),
    }
    env.pop("DATABASE_URL", None)
    migrated_sqlite(tmp_path / "data" / "service.sqlite3")
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "2"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/health", deadline_s=START_DEADLINE_S)
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


@pytest.mark.slow
def test_serve_answers_health_and_stops_on_sigterm(server: tuple[subprocess.Popen[str], int]) -> None:
    proc, port = server
    status, _, body = http("GET", f"http://127.0.0.1:{port}/health")
    assert status == 200 and body["status"] == "healthy"
    status, headers, body = http("GET", f"http://127.0.0.1:{port}/audit/logs", headers={"X-API-Key": "wrong"})
    assert status == 401 and "WWW-Authenticate" in headers and set(body) == {"error", "detail", "timestamp"}
    status, _, body = http("GET", f"http://127.0.0.1:{port}/audit/logs?action=authenticate",
                           headers={"X-API-Key": "serve-test-key"})
    assert status == 200 and body["entries"][0]["details"]["reason"] == "invalid"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0


@pytest.mark.slow
def test_serve_warns_loudly_in_insecure_mode(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "SERVICE_DATA_DIR": str(tmp_path), "SERVICE_CONFIG": str(tmp_path / "none.yml")}
    env.pop("SERVICE_API_KEY", None)
    env.pop("DATABASE_URL", None)
    migrated_sqlite(tmp_path / "service.sqlite3")
    output, _ = serve_until_healthy(["--port", str(port), "--workers", "1"], env, port)
    assert "INSECURE MODE" in output


@pytest.mark.slow
def test_serve_refuses_a_bad_port() -> None:
    result = subprocess.run([sys.executable, "manage.py", "serve", "--port", "70000"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "--port" in result.stderr


@pytest.mark.server
@pytest.mark.slow
def test_serve_names_an_unreachable_database_in_one_line(tmp_path: Path) -> None:
    env = clean_env(tmp_path, DATABASE_URL="postgres://nobody@127.0.0.1:1/none")
    result = subprocess.run([sys.executable, "manage.py", "serve", "--port", str(free_port())],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("CommandError: database error: connection failed")


@pytest.mark.slow
def test_the_gunicorn_config_takes_its_values_from_settings(tmp_path: Path) -> None:
    code = (
        "import json, runpy, sys\n"
        "conf = runpy.run_path(sys.argv[1])\n"
        "keys = ('bind', 'workers', 'threads', 'timeout', 'loglevel', 'preload_app')\n"
        "print(json.dumps({k: conf[k] for k in keys}))\n"
    )
    env = clean_env(tmp_path, SERVICE_HOST="192.0.2.1", SERVICE_PORT="8123", SERVICE_WORKERS="3",
                    SERVICE_THREADS="5", SERVICE_TIMEOUT="77", SERVICE_LOG_LEVEL="Warning")
    result = subprocess.run([sys.executable, "-c", code, str(CONF)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "bind": "192.0.2.1:8123", "workers": 3, "threads": 5, "timeout": 77, "loglevel": "warning", "preload_app": True,
    }


@pytest.mark.slow
def test_the_gunicorn_config_refuses_a_bad_setting_naming_the_variable(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv[1])", str(CONF)],
                            cwd=ROOT, env=clean_env(tmp_path, SERVICE_THREADS="many"),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "ImproperlyConfigured: SERVICE_THREADS must be an integer of at least 1, not 'many'." in result.stderr


@pytest.mark.slow
def test_gunicorn_options_as_serve_passes_them_win_over_the_config_file(tmp_path: Path) -> None:
    env = clean_env(tmp_path, SERVICE_PORT="8123", SERVICE_WORKERS="3", SERVICE_THREADS="5")
    result = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--config", str(CONF), "--bind", "127.0.0.1:9999", "--workers", "6",
         "--log-level", "error", "--print-config", "project.wsgi:application"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    printed = {}
    for line in result.stdout.splitlines():
        name, _, value = line.partition(" = ")
        printed[name.strip()] = value.strip()
    assert {k: printed[k] for k in ("bind", "workers", "threads", "loglevel")} == {
        "bind": "['127.0.0.1:9999']", "workers": "6", "threads": "5", "loglevel": "error",
    }


@pytest.mark.slow
def test_serve_without_options_binds_where_the_settings_say(tmp_path: Path) -> None:
    port = free_port()
    env = clean_env(tmp_path, SERVICE_PORT=str(port), SERVICE_WORKERS="1", SERVICE_API_KEY="serve-test-key",
                    SERVICE_CONFIG=str(ROOT / "examples" / "Secretfile.yml"))
    migrated_sqlite(tmp_path / "data" / "service.sqlite3")
    output, returncode = serve_until_healthy([], env, port)
    assert f"Serving on http://127.0.0.1:{port} (1 workers)" in output
    assert returncode == 0


@pytest.mark.slow
def test_serve_does_not_warn_when_only_named_keys_are_configured(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "SERVICE_DATA_DIR": str(tmp_path), "SERVICE_CONFIG": str(tmp_path / "none.yml")}
    env.pop("SERVICE_API_KEY", None)
    env.pop("DATABASE_URL", None)
    migrated_sqlite(tmp_path / "service.sqlite3")
    subprocess.run([sys.executable, "manage.py", "apikey", "create", "ci", "--scope", "read"],
                   cwd=ROOT, env=env, capture_output=True, check=True, timeout=60)
    output, _ = serve_until_healthy(["--port", str(port), "--workers", "1"], env, port)
    assert "INSECURE MODE" not in output


@pytest.mark.slow
def test_the_gunicorn_config_sets_only_gunicorn_s_documented_settings_with_its_own_worker(tmp_path: Path) -> None:
    """No subclass of gunicorn's internals and no replaced function: every public name the config
    defines is one of gunicorn's settings (hooks included), and the worker is gunicorn's gthread."""
    code = (
        "import json, runpy, sys, types\n"
        "from gunicorn.config import KNOWN_SETTINGS\n"
        "conf = runpy.run_path(sys.argv[1])\n"
        "names = {k for k, v in conf.items() if not k.startswith('_') and not isinstance(v, types.ModuleType)}\n"
        "imported = {'Any', 'settings'}\n"
        "known = {s.name for s in KNOWN_SETTINGS}\n"
        "print(json.dumps({'unknown': sorted(names - imported - known), 'worker': conf['worker_class']}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code, str(CONF)], cwd=ROOT, env=clean_env(tmp_path),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"unknown": [], "worker": "gthread"}


@pytest.mark.server
@pytest.mark.slow
def test_serve_behind_the_proxy_refuses_to_listen_beyond_loopback(tmp_path: Path) -> None:
    env = clean_env(tmp_path, SERVICE_BEHIND_PROXY="true", SERVICE_API_KEY="k")
    result = subprocess.run([sys.executable, "manage.py", "serve", "--host", "0.0.0.0", "--port", str(free_port())],  # noqa: S104
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "Refusing to listen on 0.0.0.0 with SERVICE_BEHIND_PROXY=true" in result.stderr


def _descendants(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            found += [int(child), *_descendants(int(child))]
    return found


@pytest.mark.slow
def test_serve_alone_starts_a_job_worker_that_runs_a_sync_and_stops_with_it(tmp_path: Path) -> None:
    port = free_port()
    env = clean_env(tmp_path, SERVICE_API_KEY="serve-test-key", SERVICE_LOCKFILE=str(tmp_path / "lock.json"),
                    SERVICE_CONFIG=str(ROOT / "examples" / "Secretfile.yml"))
    migrated_sqlite(tmp_path / "data" / "service.sqlite3")
    proc = subprocess.Popen([sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "1"], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/health", deadline_s=START_DEADLINE_S)
        status, _, body = http("GET", f"http://127.0.0.1:{port}/health")
        assert (body["status"], body["workers"]) == ("healthy", "up")
        status, _, body = http("POST", f"http://127.0.0.1:{port}/sync", {}, headers={"X-API-Key": "serve-test-key"},
                               timeout=120)
        assert status == 200 and "db_password" in body["secrets_generated"]
        family = [proc.pid, *_descendants(proc.pid)]
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert "Job worker: started with the server" in output
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid) for pid in family):
        assert time.monotonic() < deadline, "the worker outlived serve"
        time.sleep(0.2)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"


@pytest.mark.slow
def test_serve_told_not_to_start_a_worker_says_so_and_long_operations_answer_503_at_once(tmp_path: Path) -> None:
    port = free_port()
    env = clean_env(tmp_path, SERVICE_API_KEY="serve-test-key", SERVICE_LOCKFILE=str(tmp_path / "lock.json"),
                    SERVICE_CONFIG=str(ROOT / "examples" / "Secretfile.yml"))
    migrated_sqlite(tmp_path / "data" / "service.sqlite3")
    proc = subprocess.Popen([sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "1",
                             "--worker", "no"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/health", deadline_s=START_DEADLINE_S)
        status, _, body = http("GET", f"http://127.0.0.1:{port}/health")
        assert (status, body["status"], body["workers"]) == (200, "degraded", "down")
        started = time.monotonic()
        status, _, body = http("POST", f"http://127.0.0.1:{port}/sync", {}, headers={"X-API-Key": "serve-test-key"})
        assert time.monotonic() - started < 10  # at once, never the 30 s wait for a job nobody runs
        assert status == 503 and "no_worker" in body["detail"] and set(body) == {"error", "detail", "timestamp"}
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert "no job worker is running" in output


@contextlib.contextmanager
def one_web_worker(tmp_path: Path, worker: str) -> Iterator[subprocess.Popen[bytes]]:
    """``serve`` with one web worker and ``--worker`` as given, in its own process group, until
    /health answers; the whole group killed afterwards. Without the parent's MALLOC_ARENA_MAX:
    what serve runs with is its own."""
    port = free_port()
    env = clean_env(tmp_path, SERVICE_API_KEY="serve-test-key",
                    SERVICE_CONFIG=str(ROOT / "examples" / "Secretfile.yml"))
    env.pop("MALLOC_ARENA_MAX", None)
    migrated_sqlite(tmp_path / "data" / "service.sqlite3")
    proc = subprocess.Popen([sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "1",
                             "--worker", worker], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/health", deadline_s=START_DEADLINE_S)
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@pytest.mark.slow
def test_serve_is_gunicorn_s_master_itself_running_with_two_malloc_arenas(tmp_path: Path) -> None:
    with one_web_worker(tmp_path, "no") as proc:
        # The PID serve started with is the master (SIGTERM reaches it), its one child the web worker.
        assert b"serve" in Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
        (worker,) = _descendants(proc.pid)
        for pid in (proc.pid, worker):
            assert b"MALLOC_ARENA_MAX=2" in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")


@pytest.mark.slow
def test_serve_s_log_level_wins_over_the_setting_in_gunicorn_s_own_lines(tmp_path: Path) -> None:
    port = free_port()
    env = clean_env(tmp_path, SERVICE_API_KEY="serve-test-key", SERVICE_LOG_LEVEL="info",
                    SERVICE_CONFIG=str(ROOT / "examples" / "Secretfile.yml"))
    migrated_sqlite(tmp_path / "data" / "service.sqlite3")
    output, code = serve_until_healthy(["--port", str(port), "--workers", "1", "--worker", "no",
                                        "--log-level", "warning"], env, port)
    assert code == 0 and f"Serving on http://127.0.0.1:{port}" in output
    # gunicorn says these at INFO: the setting's level would print them.
    assert "Listening at" not in output and "Booting worker" not in output


@pytest.mark.slow
def test_the_job_worker_and_web_workers_end_when_serve_is_killed(tmp_path: Path) -> None:
    with one_web_worker(tmp_path, "yes") as proc:
        children = _descendants(proc.pid)
        assert len(children) == 2  # the web worker and the job worker, both forked from serve
        proc.kill()  # serve alone, as a crash or the OOM killer would: no signal reaches its children
        proc.wait(timeout=10)
        deadline = time.monotonic() + 30
        while any(Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid) for pid in children):
            assert time.monotonic() < deadline, "a child outlived serve"
            time.sleep(0.2)


@pytest.mark.slow
def test_the_job_worker_serve_starts_runs_nicer_than_its_web_workers(tmp_path: Path) -> None:
    own = os.getpriority(os.PRIO_PROCESS, 0)
    with one_web_worker(tmp_path, "yes") as proc:
        # serve answers once its job worker has registered, which it does after lowering its priority.
        children = sorted(os.getpriority(os.PRIO_PROCESS, pid) for pid in _descendants(proc.pid))
        assert children == [own, max(own, 10)]  # the web worker; the job worker, at SERVICE_WORKER_NICE's default
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == own  # gunicorn's master


@pytest.mark.slow
@pytest.mark.parametrize(("ending", "code"), [
    (None, 0), (SystemExit(4), 4), (SystemExit("Error: the worker cannot start"), 1), (RuntimeError("boom"), 1),
])
def test_the_forked_job_worker_ends_with_the_status_its_command_would_have(
    ending: BaseException | None, code: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    def command(argv: list[str]) -> None:
        assert argv == ["manage.py", "worker", "--stop-with-parent"]
        if ending is not None:
            raise ending

    monkeypatch.setattr(serve_command, "execute_from_command_line", command)
    child = serve_command._fork_worker()  # the child ends inside, never returning here
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == code
    assert serve_command._exited(child)  # reaped already: serve still sees it as ended
