"""The README's curl session, run verbatim in a scratch copy of the repository (a fresh clone),
and the make targets it relies on.

The curl session is run line by line in one bash, as a reader pastes it: ``make -s key``, a
real ``make serve`` in the background (on a free port: the session's ``localhost:8000`` is the
only text changed), then curl. The copy has no venv: make makes one through a ``PYTHON`` whose
venv runs this checkout's (``tests.docsession``), so nothing is installed. The README's other
block and the docs pages' blocks are run by ``test_doc_shell_blocks.py``.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.docsession import Ran, clean_env, explain, run_session
from tests.documentation import Command, ShellBlock, shell_blocks
from tests.processes.live import free_port

ROOT = Path(__file__).resolve().parents[2]
SESSION_DEADLINE_S = 180

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / ".venv" / ".installed").exists(), reason="needs this checkout's installed .venv"),
]


def readme_block(heading: str) -> ShellBlock:
    """The first shell block after ``heading`` in README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    at = text[: text.index(heading)].count("\n") + 1
    return next(b for b in shell_blocks() if b.page == "README.md" and b.line > at)


@pytest.fixture
def session(clone: Path, python_shim: Path, tmp_path: Path) -> tuple[list[str], list[Ran], Path]:
    """The curl session, pasted line by line into one bash (``localhost:8000`` becomes a free port)."""
    commands = readme_block("## A curl session").commands
    port = free_port()
    out = tmp_path / "session"
    ran = run_session([*commands, Command("(test)", 0, f'printf %s "$SERVICE_API_KEY" >{out}/key')], cwd=clone,
                      env=clean_env(python_shim, SERVICE_PORT=str(port)), logs=out,
                      replace={"localhost:8000": f"localhost:{port}"}, deadline_s=SESSION_DEADLINE_S)
    return [c.text for c in commands], ran, out


def line_of(lines: list[str], start: str) -> int:
    matches = [i for i, line in enumerate(lines) if line.startswith(start)]
    assert len(matches) == 1, f"expected one line starting with {start!r} in the curl session: {lines}"
    return matches[0]


def test_the_curl_session_works_verbatim_on_a_fresh_clone(session: tuple[list[str], list[Ran], Path]) -> None:
    lines, ran, out = session
    assert explain(ran) == ""
    results = [(r.rc, r.out, r.err) for r in ran]
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
