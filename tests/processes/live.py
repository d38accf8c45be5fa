"""Real ``manage.py serve`` processes for tests: started in their own process group, on a
loopback port, with their output in a file; always killed, master and workers, at the end.

Also: free ports, a small HTTP client, a throwaway PostgreSQL database per test
(TEST_DATABASE_URL), definitions with many
secrets, and readers that parse every target file in its own format.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "live-test-key-0c7e5a91"
SECRET_KEY = "live-test-secret-key-5b1e0c7f2d94a8e63f17c0b4d29e8a57c61f03b9d8e2a4c7"
START_DEADLINE_S = 90.0

FORMATS = ("env", "json", "yaml", "toml")


# Every port free_port() gave, with when: no two tests get the same one within PORT_HELD_S.
PORT_LEDGER = Path(tempfile.gettempdir()) / f"secretsapi-test-ports-{os.getuid()}"
PORT_HELD_S = 600


def kernel_port() -> int:
    """A loopback port the kernel says is free now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_port() -> int:
    """A loopback port free now, and given to no other test process (any xdist worker, any run on
    this host) in the last PORT_HELD_S seconds. The kernel alone may give a port one process has
    just closed to another, so two tests' servers would race for it."""
    with open(PORT_LEDGER, "a+") as ledger:
        fcntl.flock(ledger, fcntl.LOCK_EX)
        ledger.seek(0)
        now = time.time()
        given: dict[int, float] = {}
        for line in ledger.read().split():
            number, _, at = line.partition(":")
            with contextlib.suppress(ValueError):
                if now - float(at) < PORT_HELD_S:
                    given[int(number)] = float(at)
        for _attempt in range(1000):
            port = kernel_port()
            if port not in given:
                break
        given[port] = now
        ledger.seek(0)
        ledger.truncate()
        ledger.write("".join(f"{held}:{at}\n" for held, at in given.items()))
    return port


def listens_on(pid: int, port: int) -> bool:
    """Whether process ``pid`` holds a socket listening on TCP ``port`` (IPv4): the listener's
    inode in /proc/net/tcp among its descriptors. A port that answers is not enough to know a
    server we started is up: a free port may be given to two tests at once under xdist, and the
    other test's server answers while ours is still retrying to bind."""
    listening = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
            listening.add(f"socket:[{fields[9]}]")
    if not listening:
        return False
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd) in listening:
                    return True
    return False


def http(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None,
         timeout: float = 30) -> tuple[int, dict[str, str], Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read() or b"null")


def wait_for(url: str, deadline_s: float = 30) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer within {deadline_s}s")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class LiveServer:
    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path
    headers: dict[str, str] = field(default_factory=lambda: {"X-API-Key": API_KEY})
    # `manage.py worker` beside `serve`: the long operations run there, as jobs.
    jobs: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def call(self, method: str, path: str, body: Any = None, timeout: float = 120) -> tuple[int, Any]:
        status, _, data = http(method, self.url + path, body, headers=self.headers, timeout=timeout)
        return status, data

    def finished(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """A POST operation's final status and body. One still running past the server's wait bound
        (``SERVICE_JOB_WAIT_SECONDS``) is answered 202 with its job, which is read until it ends:
        on a loaded host writes queue behind each other's locks, and the test counts results."""
        status, data = self.call("POST", path, body)
        for _ in range(3000):
            if status != 202:
                return status, data
            time.sleep(0.1)
            _, job = self.call("GET", f"/jobs/{data['id']}")
            if job["state"] in ("succeeded", "failed"):
                return job["status"], job["result"]
        raise AssertionError(f"{path}: its job did not end in 5 minutes")

    def log(self) -> str:
        return _log_text(self.log_path)

    def kill(self) -> None:
        """kill -9 of serve's process group (gunicorn's master and web workers, and the job worker
        serve started) and of a separate job worker; returns once gone."""
        for proc in (self.proc, self.jobs):
            if proc is None:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=30)
            _wait_group_gone(proc.pid)

    def stop(self) -> None:
        """SIGTERM (graceful), then kill -9 if anything is left after a bound."""
        for proc in (self.proc, self.jobs):
            if proc is not None and proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=30)
        self.kill()


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of the group: orphaned workers are reaped by init, not us."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def _wait_group_gone(pgid: int, deadline_s: float = 30) -> None:
    end = time.monotonic() + deadline_s
    while _group_members(pgid):
        if time.monotonic() > end:
            raise AssertionError(f"process group {pgid} still has {_group_members(pgid)}")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        time.sleep(0.02)


def server_env(
    *, data_dir: Path, config: Path, lockfile: Path | None = None, database_url: str | None = None,
    api_key: str | None = API_KEY, secret_key: str | None = SECRET_KEY, extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """The parent's environment less every service setting, then exactly the ones given. Every
    instance gets one secret key (as instances sharing a database must: `serve` refuses another);
    ``secret_key=None`` lets it generate its own in its data folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    env.update({"SERVICE_DATA_DIR": str(data_dir), "SERVICE_CONFIG": str(config), "PYTHONUNBUFFERED": "1",
                # No schedule ticks in the middle of a test (the tests of schedules set their own).
                "SERVICE_ROTATION_SCHEDULE": "off", "SERVICE_DRIFT_SCHEDULE": "off"})
    if lockfile is not None:
        env["SERVICE_LOCKFILE"] = str(lockfile)
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    if api_key is not None:
        env["SERVICE_API_KEY"] = api_key
    if secret_key is not None:
        env["SERVICE_SECRET_KEY"] = secret_key
    env.update(extra or {})
    return env


def _migrated_sqlite() -> Path:
    """A database as ``serve``'s first start leaves it (``migrate`` on an empty SQLite file, before
    any request): copied into a new data folder it spares each start the migrations (~0.9 s of
    CPU), which the tests of starting on an empty database still run. Made once, named after the
    migrations (``_migrations_digest``) in the temp folder and kept there, under a file lock (test
    processes starting at once make one), and moved into place complete."""
    folder = Path(tempfile.gettempdir()) / "secretsapi-tests-migrated"
    template = folder / f"{_migrations_digest()}.sqlite3"
    if template.exists():
        return template
    folder.mkdir(mode=0o700, exist_ok=True)
    with open(folder / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not template.exists():
            with tempfile.TemporaryDirectory(dir=folder) as making:
                env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
                subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True,
                               timeout=300, env={**env, "SERVICE_DATA_DIR": making})
                # SQLite's own copy: the write-ahead log included, whatever migrate left unmerged.
                with contextlib.closing(sqlite3.connect(Path(making) / "service.sqlite3")) as source, \
                        contextlib.closing(sqlite3.connect(Path(making) / "copy.sqlite3")) as copy:
                    source.backup(copy)
                os.replace(Path(making) / "copy.sqlite3", template)
    return template


def _start_migrated(env: dict[str, str]) -> None:
    """A new SQLite data folder gets the migrated database; PostgreSQL, or a folder that has a
    database already, is left as it is."""
    if "DATABASE_URL" in env:
        return
    data = Path(env["SERVICE_DATA_DIR"])
    if (data / "service.sqlite3").exists():
        return
    migrated_sqlite(data / "service.sqlite3")


def migrated_sqlite(path: Path) -> Path:
    """``path`` (a new file; its folder is made private if new) becomes a database as ``migrate``
    leaves an empty one: for a test whose processes need a migrated database and that is not about
    migrating one (~2.4 s of CPU less than ``manage.py migrate``)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=False)
    # SQLite's own copy: the template's write-ahead log included, whatever migrate left unmerged.
    with contextlib.closing(sqlite3.connect(_migrated_sqlite())) as source, \
            contextlib.closing(sqlite3.connect(path)) as copy:
        source.backup(copy)
    return path


def start_server(env: dict[str, str], log_path: Path, *, workers: int = 1, log_level: str = "info",
                 prefix: tuple[str, ...] = (), migrated: bool = True, separate_worker: bool = False) -> LiveServer:
    """Start ``serve`` with its job worker and wait until /health answers (retried on another port
    if it cannot bind) and the worker's runners are ready.

    ``prefix`` runs it through a wrapper command (which must exec it, keeping its process group).
    ``migrated=False``: a new SQLite data folder starts empty, and ``serve`` migrates it (else it
    starts with the migrated database, as ``serve`` would have left it). ``separate_worker``: the
    job worker is a ``manage.py worker`` of its own (``server.jobs``, in its own process group),
    not serve's child: for a test that kills it alone or counts serve's children.
    """
    if migrated:
        _start_migrated(env)
    for _attempt in range(3):
        port = free_port()
        readied = _log_text(log_path).count(WORKER_READY)
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [*prefix, sys.executable, "manage.py", "serve", "--port", str(port), "--workers", str(workers),
                 "--log-level", log_level, "--worker", "no" if separate_worker else "yes"],
                cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        server = LiveServer(proc, port, log_path)
        try:
            if _wait_ready(server):
                if separate_worker:
                    with open(log_path, "ab") as log:
                        server.jobs = subprocess.Popen(
                            [*prefix, sys.executable, "manage.py", "worker"], cwd=ROOT, env=env,
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                        )
                _wait_worker(server, readied)
                return server
        except BaseException:
            server.kill()
            raise
        server.kill()
        if "Address already in use" not in server.log():
            break
    raise AssertionError(f"serve did not start; its output:\n{server.log()[-4000:]}")


def _log_text(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


WORKER_READY = "Job worker ready: "


def _wait_worker(server: LiveServer, readied: int) -> None:
    """Until /health counts the job worker (its heartbeat) and this server's own worker said it is
    ready (its runners started): a long operation sent earlier is 503. /health counts the workers
    of every instance on the database, so another instance's worker alone is not enough (its
    queue is not this one's)."""
    end = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < end:
        process = server.jobs or server.proc
        assert process.poll() is None, f"the worker exited:\n{server.log()[-4000:]}"
        # The log line first (a file read), then /health: a request per poll while the worker
        # starts was ~0.3 s of the server's CPU on every start.
        if server.log().count(WORKER_READY) > readied:
            with contextlib.suppress(OSError):
                _, _, body = http("GET", server.url + "/health", timeout=2)
                if isinstance(body, dict) and body.get("workers") == "up":
                    return
        time.sleep(0.05)
    raise AssertionError(f"the job worker never sent a heartbeat:\n{server.log()[-4000:]}")


def _wait_ready(server: LiveServer) -> bool:
    end = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < end:
        if server.proc.poll() is not None:
            return False
        try:
            status, _, _ = http("GET", server.url + "/health", timeout=2)
            if status == 200 and listens_on(server.proc.pid, server.port):
                return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


@pytest.fixture
def servers() -> Iterator[Callable[..., LiveServer]]:
    """``servers(env, log_path, workers=...)`` starts one; every one is killed at teardown."""
    yield from _servers()


@pytest.fixture(scope="module")
def module_servers() -> Iterator[Callable[..., LiveServer]]:
    """``servers`` for a module-scoped fixture: a server the module's tests share (each one's
    requests leaving nothing another reads), killed after the module's last test."""
    yield from _servers()


def _servers() -> Iterator[Callable[..., LiveServer]]:
    started: list[LiveServer] = []

    def start(env: dict[str, str], log_path: Path, **kwargs: Any) -> LiveServer:
        server = start_server(env, log_path, **kwargs)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.kill()


# --- PostgreSQL ------------------------------------------------------------------------------

SKIP_REASON = (
    "PostgreSQL tests need TEST_DATABASE_URL=postgres://user:password@host:port/dbname for a role "
    "with CREATEDB and CREATEROLE (see docs/operations.md, 'Tests on PostgreSQL'); .ci/run sets it up"
)


def postgres_admin_url() -> str:
    """TEST_DATABASE_URL, or skip (fail when TEST_REQUIRE_POSTGRES=1, as in CI)."""
    url = os.environ.get("TEST_DATABASE_URL", "").strip()
    if url:
        return url
    if os.environ.get("TEST_REQUIRE_POSTGRES", "").strip() in {"1", "true", "yes"}:
        pytest.fail("TEST_REQUIRE_POSTGRES is set but TEST_DATABASE_URL is not")
    pytest.skip(SKIP_REASON)


def _drop_database(admin: str, name: str) -> None:
    """DROP ... WITH (FORCE) ends our own sessions; an autovacuum worker that just started on the
    new database belongs to the superuser and cannot be ended by the test role: it finishes in
    moments on an empty database, so the drop is tried again for a bounded while."""
    import psycopg

    for attempt in range(20):
        try:
            with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        except psycopg.errors.InsufficientPrivilege:
            if attempt == 19:
                raise
            time.sleep(0.5)


def _create_database(admin: str, name: str, template: str | None = None) -> None:
    import psycopg

    # WAL_LOG (the default) copies the template block by block: no checkpoint, as FILE_COPY forces.
    copy = f' TEMPLATE "{template}" STRATEGY WAL_LOG' if template else ""
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'CREATE DATABASE "{name}"{copy}')
    except psycopg.Error as exc:
        pytest.fail(f"cannot create a test database with TEST_DATABASE_URL: {exc}")


def _database_url(admin: str, name: str) -> str:
    return urlunsplit(urlsplit(admin)._replace(path="/" + name))


@contextlib.contextmanager
def new_pg_database(template: str | None = None) -> Iterator[str]:
    """A new database (empty, or a copy of ``template``), dropped with its connections at the end."""
    admin = postgres_admin_url()
    name = f"secretsapi_t_{uuid.uuid4().hex[:12]}"
    _create_database(admin, name, template)
    try:
        yield _database_url(admin, name)
    finally:
        _drop_database(admin, name)


@pytest.fixture
def pg_database() -> Iterator[str]:
    """The URL of a new, empty database, dropped (with its connections) at teardown: for the tests
    of migrating one (and of the steps a new install follows)."""
    with new_pg_database() as url:
        yield url


@pytest.fixture
def pg_migrated() -> Iterator[str]:
    """The URL of a new database as ``migrate`` leaves an empty one (a copy of a migrated
    template: ~1 s of CPU less than migrating it, and ~2 s less for each ``run_in_django``),
    dropped at teardown."""
    with new_pg_database(_migrated_template()) as url:
        yield url


_TEMPLATES: dict[str, str] = {}  # this process's migrated template, by TEST_DATABASE_URL
# pg_advisory_lock's key while a template is made: one maker at a time, every test run on the server.
_TEMPLATE_LOCK = 0x5EC7E75A_7E57


def _migrations_digest() -> str:
    """What a migrated database depends on: every installed app's migration files (Django's and
    the libraries' included), so a template is made again when one of them changes."""
    from django.apps import apps

    digest = hashlib.sha256()
    for config in sorted(apps.get_app_configs(), key=lambda c: c.label):
        folder = Path(config.path) / "migrations"
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
            digest.update(f"{config.label}/{path.name}\0".encode() + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _migrated_template() -> str:
    """The name of a database on the test server that ``migrate`` made from an empty one, for
    ``CREATE DATABASE ... TEMPLATE``: made once, named after the migrations (``_migrations_digest``)
    and kept, so every test process and every later run of the same migrations finds it. It is
    made under another name and renamed when complete (a maker killed midway leaves no half
    template), under an advisory lock (test processes starting at once make one); connections to
    it are refused, as copying needs none."""
    import psycopg

    admin = postgres_admin_url()
    if admin in _TEMPLATES:
        return _TEMPLATES[admin]
    name = f"secretsapi_tpl_{_migrations_digest()}"
    with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
        conn.execute("SET lock_timeout = '300s'")
        conn.execute("SELECT pg_advisory_lock(%s)", (_TEMPLATE_LOCK,))
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchall():
            making = f"{name}_{uuid.uuid4().hex[:8]}"
            _create_database(admin, making)
            try:
                with tempfile.TemporaryDirectory(prefix="secretsapi-template-") as data:
                    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
                    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True,
                                   timeout=300, env={**env, "DATABASE_URL": _database_url(admin, making),
                                                     "SERVICE_DATA_DIR": data})
                conn.execute(f'ALTER DATABASE "{making}" RENAME TO "{name}"')
            except BaseException:
                _drop_database(admin, making)
                raise
            conn.execute(f'ALTER DATABASE "{name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false')
        conn.execute("SELECT pg_advisory_unlock(%s)", (_TEMPLATE_LOCK,))
    _TEMPLATES[admin] = name
    return name


def run_in_django(database_url: str, data_dir: Path, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by ``manage.py shell`` against a migrated ``database_url`` (``pg_migrated``;
    no SERVICE_* from here)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(DATABASE_URL=database_url, SERVICE_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="project.settings")
    return subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def pg_rows(url: str, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, connect_timeout=10) as conn:
        return list(conn.execute(query, params).fetchall())


def sqlite_rows(path: Path, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(path, timeout=30)) as conn:
        return list(conn.execute(query, params).fetchall())


# --- definitions and targets -----------------------------------------------------------------

def many_secrets(count: int, files: int, *, prefix: str = "s", kinds: tuple[str, ...] = ("random_hex",),
                 **fields: Any) -> dict[str, Any]:
    """``count`` secrets spread over ``files`` target files, cycling through FORMATS.

    dotenv files get random_hex values only, so the strict reader below can parse them.
    """
    secrets = []
    for i in range(count):
        f = i % files
        fmt = FORMATS[f % len(FORMATS)]
        kind = "random_hex" if fmt == "env" else kinds[i % len(kinds)]
        secrets.append({
            "name": f"{prefix}{i}", "kind": kind, **fields,
            "targets": [{"provider": "local", "kind": "file", "config": {"path": f"out/f{f}.{fmt}"}}],
        })
    return {"version": "1.0", "secrets": secrets}


def write_definition(root: Path, document: dict[str, Any]) -> Path:
    path = root / "Secretfile.yml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def read_target(path: Path) -> dict[str, str]:
    """Parse one target file strictly in its format (raises if it is not valid)."""
    text = path.read_text(encoding="utf-8")
    suffix = path.suffix
    if suffix == ".json":
        data = json.loads(text)
    elif suffix == ".yaml":
        data = yaml.safe_load(text)
    elif suffix == ".toml":
        data = tomllib.loads(text)
    elif suffix == ".env":
        data = {}
        for number, line in enumerate(text.splitlines(), 1):
            key, sep, value = line.partition("=")
            if not sep or not key.isidentifier() or not value or any(c not in "0123456789abcdef" for c in value):
                raise ValueError(f"{path}:{number}: not a KEY=hex line")
            data[key] = value
    else:
        raise ValueError(f"unknown format {path}")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ValueError(f"{path}: not a flat mapping of strings")
    return data


def read_targets(root: Path) -> dict[str, str]:
    """Every key in every target file under ``root/out``: secret name -> value."""
    values: dict[str, str] = {}
    for path in sorted((root / "out").glob("f*.*")) if (root / "out").exists() else []:
        values.update(read_target(path))
    return values


def read_lock(path: Path) -> dict[str, Any]:
    """The lockfile's ``secrets``; an absent file is empty, an invalid one raises."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and isinstance(data["secrets"], dict)
    return data["secrets"]


def unknown_values(root: Path, lockfile: Path) -> set[str]:
    """Secrets whose value in a target has a hash the lockfile does not record for it."""
    lock = read_lock(lockfile)
    return {name for name, value in read_targets(root).items()
            if name not in lock or lock[name]["hash"] != sha(value)}


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets ``pid`` holds open (``/proc/<pid>/fd`` links ``socket:[N]``)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes
