"""Nothing under the data folder is trusted unless it is the service's own (issue 36, point 5).

As the attacker ran it: another local user created the data folder's ``cache/definitions/`` in a
shared sticky folder before the service did; the service wrote its Django file cache there
(pickles), the user swapped the files, and the next ``secretsctl status`` ran their code as
root. A pre-planted ``secret_key`` or ``service.sqlite3`` was accepted too, and the definition
cache kept ``static`` values in clear for 7 days. Every process (serve, worker, management
commands, secretsctl) now refuses to start on a data folder, or anything in it, that another
user owns or others may write; the parse store's entries are authenticated before they are read
and never hold a value.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import yaml

from tests.factories import definition, file_secret
from tests.processes.live import ROOT

NOBODY = 65534
STATIC = "hand-written-static-9c41"
PROVIDER_TOKEN = "ghp_inline-provider-token-5e7d"

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")


class Planted:
    """What the attacker's pickle runs when the service reads it: a marker file appears."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (f"touch {self.marker}",)


def _env(data: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    return {**env, "SERVICE_DATA_DIR": str(data), "SERVICE_ROTATION_SCHEDULE": "off",
            "SERVICE_DRIFT_SCHEDULE": "off", **extra}


def _run(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _status(env: dict[str, str], secretfile: Path) -> subprocess.CompletedProcess[str]:
    return _run(env, "-m", "secretsapi.cli", "-f", str(secretfile), "status")


@pytest.fixture
def secretfile(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    path = project / "Secretfile.yml"
    path.write_text(yaml.safe_dump(definition(file_secret("db", "out/app.env", rotation_period="30d"))))
    return path


def _give_away(path: Path, mode: int) -> None:
    for root, folders, files in os.walk(path):
        for name in (*folders, *files):
            os.chown(Path(root, name), NOBODY, NOBODY)
    os.chown(path, NOBODY, NOBODY)
    path.chmod(mode)


def _swap_every_entry(cache: Path, marker: Path) -> int:
    """The attacker replaces every file of the cache folder with their pickle."""
    swapped = 0
    for entry in cache.rglob("*"):
        if entry.is_file():
            entry.write_bytes(pickle.dumps(Planted(marker)))
            swapped += 1
    return swapped


@pytest.mark.slow
@as_root
def test_a_cache_folder_planted_in_a_shared_sticky_folder_runs_no_code(tmp_path: Path, secretfile: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    data = shared / "data"
    (data / "cache" / "definitions").mkdir(parents=True)  # the other user, first
    _give_away(data, 0o777)
    (data / "cache").chmod(0o777)
    (data / "cache" / "definitions").chmod(0o777)
    marker = tmp_path / "ran-as-root"
    first = _status(_env(data), secretfile)
    _swap_every_entry(data / "cache", marker)
    second = _status(_env(data), secretfile)
    assert not marker.exists()
    for done in (first, second):
        assert done.returncode != 0
        assert f"{data} belongs to user nobody ({NOBODY})" in done.stderr
        assert "Fix: remove it" in done.stderr


@pytest.mark.slow
def test_a_shared_sticky_data_folder_is_refused_even_when_it_is_the_services_own(
    tmp_path: Path, secretfile: Path
) -> None:
    data = tmp_path / "shared"
    data.mkdir()
    data.chmod(0o1777)
    done = _status(_env(data), secretfile)
    assert done.returncode != 0
    assert f"{data} may be written by other users (mode 1777) (sticky or not)" in done.stderr
    assert f"chmod go-w {data}" in done.stderr
    assert not (data / "secret_key").exists()


@pytest.mark.slow
@as_root
@pytest.mark.parametrize("name", ["secret_key", "service.sqlite3", "cache"])
def test_a_file_planted_in_the_data_folder_by_another_user_is_refused(
    tmp_path: Path, secretfile: Path, name: str
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    planted = data / name
    if name == "cache":
        planted.mkdir(mode=0o700)
    else:
        planted.write_text("attacker-chosen-secret-key-000000000000000000000000000" if name == "secret_key" else "")
        planted.chmod(0o600)
    os.chown(planted, NOBODY, NOBODY)
    done = _status(_env(data), secretfile)
    assert done.returncode != 0
    assert f"{planted} belongs to user nobody ({NOBODY})" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("mode", [0o664, 0o646, 0o622])
def test_a_file_of_the_data_folder_others_may_write_is_refused(
    tmp_path: Path, secretfile: Path, mode: int
) -> None:
    data = tmp_path / "data"
    assert _status(_env(data), secretfile).returncode == 2, "the service starts on its own folder (not generated)"
    (data / "secret_key").chmod(mode)
    done = _status(_env(data), secretfile)
    assert done.returncode != 0
    assert f"{data / 'secret_key'} may be written by other users (mode {mode:04o})" in done.stderr


@pytest.mark.slow
@as_root
def test_a_database_elsewhere_owned_by_another_user_is_refused(tmp_path: Path, secretfile: Path) -> None:
    elsewhere = tmp_path / "db"
    elsewhere.mkdir()
    database = elsewhere / "audit.sqlite3"
    database.write_bytes(b"")
    os.chown(database, NOBODY, NOBODY)
    done = _status(_env(tmp_path / "data", DATABASE_URL=f"sqlite:///{database}"), secretfile)
    assert done.returncode != 0
    assert f"{database} belongs to user nobody" in done.stderr


@as_root
@pytest.mark.parametrize("command", [
    ("manage.py", "serve", "--port", "1"), ("manage.py", "worker"), ("manage.py", "migrate"),
    ("manage.py", "status"), ("manage.py", "check"), ("-m", "secretsapi.cli", "status"),
])
@pytest.mark.slow
def test_every_process_refuses_to_start(tmp_path: Path, secretfile: Path, command: tuple[str, ...]) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    os.chown(data, NOBODY, NOBODY)
    done = _run(_env(data, SERVICE_CONFIG=str(secretfile)), *command, timeout=60)
    assert done.returncode != 0
    assert f"{data} belongs to user nobody" in done.stderr + done.stdout


@pytest.mark.slow
def test_an_entry_the_service_did_not_write_is_never_unpickled(tmp_path: Path, secretfile: Path) -> None:
    """Files swapped in a folder the attacker could write before it was refused (or restored from
    a backup): the entries are the service's files, but not its entries."""
    data = tmp_path / "data"
    env = _env(data)
    first = _status(env, secretfile)
    assert first.returncode == 2, first.stderr  # ran: db is not generated
    marker = tmp_path / "ran"
    assert _swap_every_entry(data / "cache", marker) > 0
    second = _status(env, secretfile)
    assert second.returncode == 2, second.stderr
    assert second.stdout == first.stdout
    assert not marker.exists()


@pytest.mark.slow
def test_the_parse_store_never_holds_a_static_value_or_a_providers_credential(
    tmp_path: Path, secretfile: Path
) -> None:
    secretfile.write_text(yaml.safe_dump(definition(
        {"name": "license", "kind": "static", "config": {"value": STATIC},
         "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/app.env"}}]},
        file_secret("db", "out/app.env", rotation_period="30d"),
        providers={"gh": {"kind": "github", "auth": {"kind": "token", "config": {"token": PROVIDER_TOKEN}}}},
    )))
    data = tmp_path / "data"
    env = _env(data)
    for args in (("sync",), ("status",), ("status",)):
        done = _run(env, "-m", "secretsapi.cli", "-f", str(secretfile), *args)
        assert done.returncode in (0, 2), done.stderr
    stored = b"".join(_readable(p.read_bytes()) for p in (data / "cache").rglob("*") if p.is_file())
    assert stored, "the status plan is still stored"
    assert STATIC.encode() not in stored and PROVIDER_TOKEN.encode() not in stored


def _readable(data: bytes) -> bytes:
    """The bytes, and any zlib stream in them decompressed (Django's file cache compressed its pickles)."""
    found = [data]
    for start in (i for i in range(len(data)) if data[i] == 0x78):
        with contextlib.suppress(zlib.error):
            found.append(zlib.decompressobj().decompress(data[start:]))
    return b"".join(found)
