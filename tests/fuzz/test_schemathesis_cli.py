"""``schemathesis run --checks all`` with every phase (examples, coverage, fuzzing, stateful)
against a real server (``manage.py serve``, gunicorn): any finding fails the test.

Bounded and reproducible: a fixed seed, deterministic generation, a few examples per operation,
no example database, its cache in the test's folder. It reads the repository's
``schemathesis.toml``, as a run from the checkout does: the statuses that are answers rather
than findings are stated there, with why.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.factories import definition, file_secret
from tests.processes.live import API_KEY, ROOT, server_env, start_server

MAX_EXAMPLES = 8


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
    server = start_server(server_env(data_dir=tmp_path / "data", config=config), tmp_path / "serve.log")
    try:
        assert server.call("POST", "/sync", {})[0] == 200
        run = subprocess.run(
            [str(Path(sys.executable).parent / "schemathesis"), "--config-file", str(ROOT / "schemathesis.toml"),
             "run", f"{server.url}/openapi.json",
             "--checks", "all", "--phases", "examples,coverage,fuzzing,stateful",
             "--seed", "1", "--generation-deterministic",
             "--max-examples", str(MAX_EXAMPLES), "--header", f"X-API-Key: {API_KEY}", "--no-color"],
            cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False,
        )
    finally:
        server.kill()
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
