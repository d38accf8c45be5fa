"""The README's shell commands, run verbatim in a scratch copy of the repository (a fresh clone).

The curl session is run line by line in one bash, as a reader pastes it: ``make -s key``, a
real ``make serve`` in the background (on a free port: the session's ``localhost:8000`` is the
only text changed), then curl. The copy has no venv: make makes one through a ``PYTHON`` whose
venv runs this checkout's (``python_shim``), so nothing is installed. Not run here: ``make test``
(this suite), ``make lint`` and ``make bench`` (minutes each), ``createsuperuser`` (interactive)
and the PostgreSQL commands (they need a server).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes.live import free_port

ROOT = Path(__file__).resolve().parents[2]
SESSION_DEADLINE_S = 180

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / ".venv" / ".installed").exists(), reason="needs this checkout's installed .venv"),
]


def readme_block(heading: str) -> list[str]:
    """The command lines of the first ``sh`` block after ``heading`` in README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(heading):]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, f"no sh block after {heading!r}"
    return [line for line in block.group(1).splitlines() if line.strip()]


def clean_env(python_shim: Path, **given: str) -> dict[str, str]:
    """The environment of a new shell: none of the service's settings, then exactly the ones given,
    and ``PYTHON`` (the Makefile's interpreter for ``-m venv``) set to the shim."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SERVICE_", "MAKE", "MFLAGS")) and k not in {"DATABASE_URL", "VIRTUAL_ENV"}}
    return {**env, "PYTHON": str(python_shim), **given}


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """What ``git clone`` of this working tree would give (tracked and new, not ignored, files), committed.

    There is no ``.venv``: make creates it, through ``PYTHON`` (see ``clean_env``).
    """
    copy = tmp_path / "clone"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=copy, check=True)
    subprocess.run([*git, "add", "-A"], cwd=copy, check=True)
    subprocess.run([*git, "commit", "-qm", "clone"], cwd=copy, check=True)
    return copy


@pytest.fixture
def python_shim(tmp_path: Path) -> Path:
    """A ``python3`` for the Makefile's ``PYTHON`` whose ``-m venv DIR`` makes a venv at once:
    its ``python`` runs this checkout's venv, and its ``pip install`` finds everything installed.
    Everything else make does (the stamp, the order of the steps) is real."""
    real = (ROOT / ".venv" / "bin" / "python").absolute()
    python = (
        "#!/bin/sh\n"
        'if [ "$1 $2" = "-m pip" ]; then exit 0; fi  # already installed: never touch the shared venv\n'
        f'exec "{real}" "$@"\n'
    )
    shim = tmp_path / "python3"
    shim.write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2" != "-m venv" ]; then echo "unexpected: $*" >&2; exit 1; fi\n'
        'mkdir -p "$3/bin" && cat >"$3/bin/python" <<\'EOF\'\n' + python + "EOF\n"
        'chmod +x "$3/bin/python"\n'
    )
    shim.chmod(0o755)
    return shim


@pytest.fixture
def session(clone: Path, python_shim: Path) -> Iterator[tuple[list[str], list[tuple[int, str, str]], Path]]:
    """Run the curl session line by line in one bash; every line's (exit code, stdout, stderr).

    The shell and everything it starts (make, manage.py serve, gunicorn's master and workers)
    share one new process group, killed at the end whatever happened.
    """
    lines = readme_block("## A curl session")
    port = free_port()
    out = clone / ".session"
    out.mkdir()
    script = ["set +e"]
    for i, line in enumerate(lines):
        # The line as written, on its own line (its comment must not swallow the closing brace).
        script += ["{", line.replace("localhost:8000", f"localhost:{port}"), f"}} >{out}/{i}.out 2>{out}/{i}.err",
                   f"echo $? >{out}/{i}.rc"]
    script.append(f'printf %s "$SERVICE_API_KEY" >{out}/key')
    proc = subprocess.Popen(["bash", "-c", "\n".join(script)], cwd=clone, start_new_session=True,
                            env=clean_env(python_shim, SERVICE_PORT=str(port)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        try:
            proc.wait(timeout=SESSION_DEADLINE_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the curl session did not finish within {SESSION_DEADLINE_S} s")
        results = []
        for i in range(len(lines)):
            rc = out / f"{i}.rc"
            results.append((int(rc.read_text()) if rc.exists() else -1, (out / f"{i}.out").read_text(),
                            (out / f"{i}.err").read_text()))
        yield lines, results, out
    finally:
        _kill_group(proc.pid)


def _kill_group(pgid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        for _ in range(50):
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            subprocess.run(["sleep", "0.1"], check=False)


def line_of(lines: list[str], start: str) -> int:
    matches = [i for i, line in enumerate(lines) if line.startswith(start)]
    assert len(matches) == 1, f"expected one line starting with {start!r} in the curl session: {lines}"
    return matches[0]


def test_the_curl_session_works_verbatim_on_a_fresh_clone(
        session: tuple[list[str], list[tuple[int, str, str]], Path]) -> None:
    lines, results, out = session
    assert all(rc == 0 for rc, _, _ in results), results
    key = (out / "key").read_text()
    assert len(base64.urlsafe_b64decode(key)) == 32, f"SERVICE_API_KEY is not a key: {key!r}"

    health = json.loads(results[line_of(lines, "until curl")][1])
    assert health["status"] == "healthy"

    synced = json.loads(results[line_of(lines, "curl -s -X POST -H \"X-API-Key: $SERVICE_API_KEY\" -H 'Content-Type: "
                                      "application/json' -d '{}' localhost:8000/sync")][1])
    assert "db_password" in synced["secrets_generated"]
    status = json.loads(results[line_of(lines, "curl -s localhost:8000/secrets/db_password/status")][1])
    assert status["name"] == "db_password" and status["exists"] is True
    drift = json.loads(results[line_of(lines, "curl -s -X POST -H \"X-API-Key: $SERVICE_API_KEY\" -H 'Content-Type: "
                                     "application/json' -d '{}' localhost:8000/drift/check")][1])
    assert drift["has_drift"] is False, drift
    logs = json.loads(results[line_of(lines, 'curl -s -H "X-API-Key: $SERVICE_API_KEY"')][1])
    (row,) = logs["entries"]  # the sync's row, naming what it generated
    assert row["action"] == "sync" and row["success"] is True and "db_password" in row["details"]["generated"]

    head, body = re.split(r"\r?\n\r?\n", results[line_of(lines, "curl -si -H 'X-API-Key: wrong'")][1], maxsplit=1)
    assert head.splitlines()[0].split()[1] == "401"  # the server requires the key: not started open
    assert re.search(r"^www-authenticate: ", head, re.IGNORECASE | re.MULTILINE)
    assert set(json.loads(body)) == {"error", "detail", "timestamp"}


def test_make_key_prints_a_key_alone_with_or_without_make_s_silence(clone: Path, python_shim: Path) -> None:
    for command in (["make", "key"], ["make", "-s", "key"]):  # the first sets up the venv
        done = subprocess.run(command, cwd=clone, env=clean_env(python_shim), capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert len(base64.urlsafe_b64decode(done.stdout.strip())) == 32 and done.stdout.count("\n") == 1


def test_make_key_sets_up_the_venv_first(clone: Path, python_shim: Path) -> None:
    """The key target depends on the install stamp, like serve and test: a dry run shows the install."""
    done = subprocess.run(["make", "-n", "key"], cwd=clone, env=clean_env(python_shim), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=60)
    assert "pip install" in done.stdout and "generate_api_key" in done.stdout


def test_the_example_sync_leaves_the_clone_clean(clone: Path, python_shim: Path) -> None:
    """Everything the example and make write (targets, lockfile, its locks, venv, data) is ignored."""
    env = clean_env(python_shim, SERVICE_CONFIG="examples/Secretfile.yml")
    subprocess.run(["make", "-s", "install"], cwd=clone, env=env, check=True, timeout=120)
    for args in (["sync"], ["rotate", "--force"], ["drift"]):
        done = subprocess.run([".venv/bin/python", "manage.py", *args], cwd=clone, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (clone / "examples/.gitsecrets.lock.targets").is_dir()
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                            capture_output=True, text=True, check=True)
    assert status.stdout == ""
