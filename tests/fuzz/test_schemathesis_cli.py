"""``schemathesis run --checks all`` with every phase (examples, coverage, fuzzing, stateful)
against a real server (``manage.py serve``, gunicorn): any finding fails the test.

It runs the command of docs/operations.md ("Tests on PostgreSQL") as written, from a folder laid
out like the checkout (its ``.venv`` and ``schemathesis.toml``, which says which statuses are
answers rather than findings, and why), on the server's port. Bounded and reproducible for CI:
a fixed seed, deterministic generation and a few examples per operation are added to it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.documentation import shell_blocks
from tests.factories import definition, file_secret
from tests.processes.live import API_KEY, ROOT, server_env, start_server

# Four examples per operation keep the run under a minute on two cores (coverage is a fixed set).
MAX_EXAMPLES = 4


@pytest.mark.fuzz
@pytest.mark.slow
def test_schemathesis_with_every_check_and_phase_finds_nothing(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = project / "Secretfile.yml"
    config.write_text(yaml.safe_dump(definition(
        file_secret("db_password", "out/app.env", rotation_period="30d"),
        file_secret("api_key", "out/app.env", kind="random_hex", rotation_period="90d"),
        file_secret("session", "out/extra.yaml", kind="uuid"),
    )))
    (project / "vars.yml").write_text("env: fuzz\n")
    ((documented,),) = [b.commands for b in shell_blocks() if b.page == "docs/operations.md"
                        and b.commands[0].text.startswith(".venv/bin/schemathesis run")]
    checkout = tmp_path / "checkout"  # hypothesis keeps its files here, not in the repository
    checkout.mkdir()
    (checkout / ".venv").symlink_to(ROOT / ".venv")
    shutil.copy(ROOT / "schemathesis.toml", checkout)
    server = start_server(server_env(data_dir=tmp_path / "data", config=config), tmp_path / "serve.log")
    command = documented.text.replace("127.0.0.1:8000", f"127.0.0.1:{server.port}").replace(
        "--checks all", f"--checks all --seed 1 --generation-deterministic --max-examples {MAX_EXAMPLES} --no-color")
    try:
        assert server.call("POST", "/sync", {})[0] == 200
        done = subprocess.run(["bash", "-c", command], cwd=checkout, capture_output=True, text=True, timeout=240,
                              check=False, env={**os.environ, "SERVICE_API_KEY": API_KEY})
    finally:
        server.kill()
    assert done.returncode == 0, f"{documented.where}: " + done.stdout[-6000:] + done.stderr[-2000:]
