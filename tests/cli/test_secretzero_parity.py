"""Against SecretZero 0.14.23 itself: a CI script written for its command line runs under
secretsctl with only the program name changed, and a two-environment project synced by either
one is complete for the other (same target files, same lockfile hashes, nothing regenerated).

SecretZero runs from its own virtualenv (Python 3.12), which ``make test`` installs
(tests/secretzero_venv.py); the tests that need it skip without it, saying why, or fail under
``TEST_REQUIRE_TOOLS=1``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from secretsapi.cli.app import cli
from tests import secretzero_venv
from tests.factories import Project

pytestmark = pytest.mark.django_db

# Written for SecretZero's CLI, as a CI job runs it (every line is valid for SecretZero 0.14.23).
CI_SCRIPT = """\
set -eu
secretzero validate -f Secretfile.yml -e prod
secretzero sync -f Secretfile.yml -e prod --dry-run --no-prompt
secretzero sync -f Secretfile.yml -e prod --no-prompt
secretzero status -f Secretfile.yml -e prod --format json > status.json
secretzero rotate -f Secretfile.yml -e prod -s db_password -s api_key --force
secretzero drift -f Secretfile.yml -e prod --format json > drift.json
secretzero list secrets -f Secretfile.yml -e prod --format json > secrets.json
secretzero -e prod sync --no-prompt
"""


def installed_script(folder: Path) -> Path:
    """``secretsctl`` as ``pip install -e .`` wrote it into this virtualenv (``make test`` does),
    linked into ``folder``: run from a project outside this checkout, as users run it, it finds
    every package of the project through the install alone."""
    script = Path(sys.executable).parent / "secretsctl"
    assert script.exists(), f"{script} is missing: install the project first (make test does)"
    link = folder / "secretsctl"
    link.symlink_to(script)
    return link


def run_script(text: str, cwd: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(cwd), "SERVICE_DATA_DIR": str(cwd / ".data")}
    return subprocess.run(["bash", "-c", text], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.mark.slow
def test_a_secretzero_ci_script_runs_with_only_the_program_name_changed(lanes: Project, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    installed_script(bin_dir)
    done = run_script(CI_SCRIPT.replace("secretzero ", "secretsctl "), lanes.root, bin_dir)
    assert done.returncode == 0, done.stderr
    assert [s["exists"] for s in json.loads((lanes.root / "status.json").read_text())] == [True, True]
    assert json.loads((lanes.root / "drift.json").read_text())["has_drift"] is False
    assert json.loads((lanes.root / "secrets.json").read_text())["total"] == 2
    lock = json.loads((lanes.root / ".gitsecrets.prod.lock").read_text())["secrets"]
    assert lock["db_password"]["rotation_count"] == 1


@pytest.mark.slow
def test_the_ci_script_is_one_secretzero_runs(lanes: Project, tmp_path: Path) -> None:
    done = run_script(CI_SCRIPT, lanes.root, secretzero_venv.require().parent)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def secretzero_sync(root: Path, *args: str) -> None:
    done = subprocess.run([str(secretzero_venv.require()), "sync", "--no-prompt", *args], cwd=root,
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "HOME": str(root)})
    assert done.returncode == 0, done.stdout[-2000:]


def hashes(root: Path, lockfile: str) -> dict[str, Any]:
    entries = json.loads((root / lockfile).read_text())["secrets"]
    return {name: (entry["hash"], entry["targets"]) for name, entry in entries.items()}


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / "out").rglob("*"))


def ours(root: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["sync", "-f", str(root / "Secretfile.yml"), "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("environment", ["prod", "dev"])
def test_after_secretzeros_sync_ours_has_nothing_to_do(lanes: Project, environment: str) -> None:
    secretzero_sync(lanes.root, "-e", environment)
    before, written = hashes(lanes.root, f".gitsecrets.{environment}.lock"), files(lanes.root)
    assert ours(lanes.root, "-e", environment)["secrets_generated"] == []
    assert (hashes(lanes.root, f".gitsecrets.{environment}.lock"), files(lanes.root)) == (before, written)


@pytest.mark.slow
@pytest.mark.parametrize("environment", ["prod", "dev"])
def test_after_our_sync_secretzero_has_nothing_to_do(lanes: Project, environment: str) -> None:
    ours(lanes.root, "-e", environment)
    before, written = hashes(lanes.root, f".gitsecrets.{environment}.lock"), files(lanes.root)
    secretzero_sync(lanes.root, "-e", environment)
    assert (hashes(lanes.root, f".gitsecrets.{environment}.lock"), files(lanes.root)) == (before, written)


@pytest.mark.slow
def test_both_write_the_same_files_for_each_environment(lanes: Project, tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    for name in ("Secretfile.yml", "dev.szvar", "prod.szvar"):
        (theirs / name).write_text((lanes.root / name).read_text())
    for environment in ("dev", "prod"):
        secretzero_sync(theirs, "-e", environment)
        ours(lanes.root, "-e", environment)
        assert target_ids(lanes.root, environment) == target_ids(theirs, environment)
    assert files(lanes.root) == files(theirs)


def target_ids(root: Path, environment: str) -> dict[str, list[str]]:
    return {name: sorted(targets) for name, (_, targets) in hashes(root, f".gitsecrets.{environment}.lock").items()}
