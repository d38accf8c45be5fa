"""The schema says exactly what the server takes in the GET operations' query (issue 37, point 10).

schemathesis with every check and a random seed found the schema and the server disagreeing on
``var_files`` and ``environment`` of ``GET /secrets``, ``/secrets/{name}`` and
``/secrets/{name}/status``: 64 var files of 4,096 characters were schema-valid, but a request line
over 4,094 bytes is refused (414) before the application sees it; ``environment`` was nullable,
which a query cannot be. The bounds now fit the request line, and schemathesis, run against a
real server, finds nothing whatever the seed, with no schema-valid answer excused.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from tests.factories import definition, file_secret
from tests.processes.live import API_KEY, ROOT, LiveServer, server_env, start_server

# gunicorn's limit_request_line: the request line's bytes the server reads at most.
REQUEST_LINE = 4094
SEEDS = (3, 1234, 987654)
PATHS = ("/secrets", "/secrets/{secret_name}/status", "/secrets/{name}")


def _query(schema: dict[str, Any], path: str) -> dict[str, dict[str, Any]]:
    parameters = schema["paths"][path]["get"]["parameters"]
    return {p["name"]: p["schema"] for p in parameters if p["in"] == "query"}


@pytest.mark.parametrize("path", PATHS)
def test_no_query_the_schema_allows_overflows_the_request_line(api: APIClient, path: str) -> None:
    """Worst case: every item at its longest, each character percent-encoded (3 bytes for printable
    ASCII, 12 for any other character), and a secret name of 255 plain characters."""
    query = _query(api.get("/openapi.json").json(), path)
    var_files, environment = query["var_files"], query["environment"]
    assert "nullable" not in environment and environment["minLength"] == 1
    item = var_files["items"]
    assert item["pattern"] == "^[ -~]*[!-~][ -~]*$"  # printable ASCII: 3 bytes a character at most
    longest = (len("GET ") + len("/secrets/") + 255 + len("/status") + len("?")
               + var_files["maxItems"] * (len("var_files=") + 3 * item["maxLength"] + len("&"))
               + len("environment=") + 12 * environment["maxLength"] + len(" HTTP/1.1"))
    assert longest <= REQUEST_LINE


def test_the_server_refuses_what_the_query_schema_forbids(authed_api: APIClient, project: Any) -> None:
    project.write(definition(file_secret("db", "out/app.env")))
    nine = "&".join(["var_files=a.yml"] * 9)
    for query in (nine, "var_files=" + "a" * 101, "var_files=caf%C3%A9.yml", "environment=" + "e" * 65,
                  "environment="):
        response = authed_api.get(f"/secrets?{query}")
        assert response.status_code == 422, (query, response.content)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server synced once for the module's seeds (~5 s of CPU each to start and sync): the
    operations fuzzed here only read (GET), so one seed's requests change no answer of another's."""
    tmp_path = tmp_path_factory.mktemp("queries")
    project = tmp_path / "project"
    project.mkdir()
    config = project / "Secretfile.yml"
    config.write_text(yaml.safe_dump(definition(
        file_secret("db_password", "out/app.env", rotation_period="30d"),
        environments={"profiles": {"staging": {"var_files": ["staging.szvar"]}}},
    )))
    (project / "staging.szvar").write_text("env: staging\n")
    server = start_server(server_env(data_dir=tmp_path / "data", config=config,
                                     extra={"SERVICE_ALLOW_VALUE_READ": "true"}), tmp_path / "serve.log")
    try:
        assert server.call("POST", "/sync", {})[0] == 200
        yield server
    finally:
        server.kill()


@pytest.mark.fuzz
@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_schemathesis_finds_nothing_in_the_get_queries_whatever_the_seed(tmp_path: Path, served: LiveServer,
                                                                         seed: int) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    # Not the checkout's schemathesis.toml: a schema-valid request must be answered as schemathesis
    # expects by default (a 414 is a finding). A schema-violating one may be refused with 414 too: its
    # values can be of any length, and a request line too long is refused before anything reads it.
    (folder / "schemathesis.toml").write_text(
        '[checks.negative_data_rejection]\nexpected-statuses = ["400", "401", "403", "404", "405", "406", '
        '"409", "413", "414", "415", "422", "428", "429", "5xx"]\n')
    done = subprocess.run(
        [str(ROOT / ".venv/bin/schemathesis"), "run", f"{served.url}/openapi.json", "--checks", "all",
         "--phases", "examples,coverage,fuzzing", "--include-path-regex", "^/secrets", "--seed", str(seed),
         "--max-examples", "25", "--no-color", "-H", f"X-API-Key: {API_KEY}"],
        cwd=folder, capture_output=True, text=True, timeout=400, check=False, env=dict(os.environ),
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
