"""Interpolation cannot build more than its limits (SERVICE_MAX_INTERPOLATED_BYTES per string,
SERVICE_MAX_RENDERED_BYTES in all): a 1 KB definition that doubles a variable 23 times is refused
before the large string exists, by every path a variable takes."""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from secretsapi.service.definition.budget import InterpolationLimits
from secretsapi.service.validate import validate_document
from tests.asserts import assert_error_body
from tests.factories import Project, definition, file_secret
from tests.processes.live import LiveServer, http, server_env

# Left to make test (tests/tiers.py): worst-case definitions, each bounded in time and memory.
pytestmark = pytest.mark.thorough

TOO_LARGE = "interpolated value larger than SERVICE_MAX_INTERPOLATED_BYTES"
MB = 1024 * 1024


def doubling(levels: int, seed: str = "x" * 64) -> dict[str, str]:
    """``v0`` is ``seed``; each next variable is the previous one twice."""
    variables = {"v0": seed}
    for level in range(1, levels):
        variables[f"v{level}"] = f"{{{{var.v{level - 1}}}}}{{{{var.v{level - 1}}}}}"
    return variables


def bomb(levels: int = 23) -> dict[str, Any]:
    last = f"v{levels - 1}"
    return definition(file_secret("a", f"out/{{{{ var.{last} }}}}.env"), variables=doubling(levels))


def peak_growth(run: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def test_the_one_kilobyte_validate_body_is_refused_in_bounded_memory(authed_api: APIClient) -> None:
    body = {"config": bomb()}
    assert len(json.dumps(body, separators=(",", ":"))) < 1024
    response, peak = peak_growth(lambda: authed_api.post("/config/validate", body, format="json"))
    assert response.status_code == 200
    report = response.json()
    assert report["valid"] is False
    # Named at the variable whose value would pass 1 MiB: 64 characters doubled 15 times.
    assert f"variables.v15: {TOO_LARGE} (1048576)" in report["errors"]
    assert peak < 100 * MB


@pytest.mark.slow
def test_the_validate_bomb_leaves_a_real_worker_small(tmp_path: Path, servers: Callable[..., LiveServer]) -> None:
    config = tmp_path / "Secretfile.yml"
    config.write_text("version: '1.0'\nsecrets: []\n")
    # The job worker on its own: serve's one child is then its web worker.
    server = servers(server_env(data_dir=tmp_path / "data", config=config), tmp_path / "serve.log",
                     separate_worker=True)
    worker = _only_worker(server)
    before = _peak_rss_kb(worker)
    started = time.monotonic()
    status, _, report = http("POST", server.url + "/config/validate", {"config": bomb()},
                             headers=server.headers, timeout=60)
    assert time.monotonic() - started < 30  # a hang guard: unbounded, this took minutes
    assert status == 200 and report["valid"] is False
    assert any(TOO_LARGE in error for error in report["errors"])
    assert _peak_rss_kb(worker) - before < 100 * 1024


def test_forty_levels_in_the_served_definition_are_a_definition_error(
    authed_api: APIClient, project: Project
) -> None:
    project.write(bomb(levels=40))
    response, peak = peak_growth(lambda: authed_api.get("/secrets"))
    detail = assert_error_body(response, 422)["detail"]
    assert f"variables.v15: {TOO_LARGE}" in detail
    assert peak < 100 * MB


def test_a_bomb_in_a_var_file_is_refused(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("a", "out/{{ var.v22 }}.env"))).declare("vars.yml")
    (project.root / "vars.yml").write_text(json.dumps(doubling(23)))
    response = authed_api.post("/config/render", {"var_files": ["vars.yml"]}, format="json")
    assert f"variables.v15: {TOO_LARGE}" in assert_error_body(response, 422)["detail"]


@pytest.mark.parametrize(
    ("variables", "value"),
    [
        # `~` joins any number of values in one expression.
        ({"a": "x" * 1000}, "{{ " + " ~ ".join(["var.a"] * 2000) + " }}"),
        # A list joined, and text replaced, by filters.
        ({"a": "x" * 1000}, "{{ [" + ", ".join(["var.a"] * 2000) + "] | join }}"),
        ({"a": "x" * 2000}, "{{ var.a | replace('x', var.a) }}"),
        # Methods and formatting whose size is a number.
        ({}, "{{ 'x'.ljust(999999999) }}"),
        ({}, "{{ '%0999999999d' % 1 }}"),
        ({}, "{{ '{:>999999999}'.format(1) }}"),
        # The `or` default, and the environment through ${NAME}.
        ({"b": "{{ var.missing or 'x' * 1000 }}"}, "{{ " + " ~ ".join(["var.b"] * 2000) + " }}"),
        ({"c": "${BIG}${BIG}${BIG}${BIG}"}, "{{ " + " ~ ".join(["var.c"] * 100) + " }}"),
    ],
    ids=["concat", "join", "replace", "ljust", "percent", "format", "or-default", "environment"],
)
def test_every_way_of_building_a_string_is_bounded(variables: dict[str, str], value: str) -> None:
    doc = definition(file_secret("a", "out/x.env", kind="static", config={"value": value}), variables=variables)
    report, peak = peak_growth(lambda: validate_document(doc, environ={"BIG": "y" * 10_000}))
    assert f"secrets[0].config.value: {TOO_LARGE} (1048576)" in report.errors
    assert peak < 32 * MB


def test_the_rendered_definition_as_a_whole_is_bounded(project: Project, authed_api: APIClient,
                                                      settings: Any) -> None:
    settings.SERVICE_MAX_RENDERED_BYTES = 1_000_000
    # Each path alone is small; 500 of them reference 10 KB each.
    secrets = [file_secret(f"s{i}", "out/{{ var.big }}/" + str(i) + ".env") for i in range(500)]
    project.write(definition(*secrets, variables={"big": "d" * 10_000}))
    detail = assert_error_body(authed_api.get("/secrets"), 422)["detail"]
    assert "rendered definition larger than SERVICE_MAX_RENDERED_BYTES (1000000)" in detail
    assert detail.count("SERVICE_MAX_RENDERED_BYTES") == 1  # reported once, not once per place


def test_the_limits_are_the_configured_ones(authed_api: APIClient, settings: Any) -> None:
    settings.SERVICE_MAX_INTERPOLATED_BYTES = 1000
    report = authed_api.post("/config/validate", {"config": bomb(levels=6)}, format="json").json()
    # 64 characters doubled 4 times is 1024.
    assert f"variables.v4: {TOO_LARGE} (1000)" in report["errors"]


def test_a_legitimate_large_definition_still_loads(authed_api: APIClient, project: Project) -> None:
    secrets = [file_secret(f"s{i}", "out/{{ var.env }}/{{ var.app }}-" + str(i % 50) + ".env",
                           rotation_period="90d") for i in range(5000)]
    project.write(definition(*secrets, variables={"env": "prod", "app": "{{ var.env }}-{{ 'billing' | upper }}"}))
    response = authed_api.get("/secrets")
    assert response.status_code == 200, response.content[:500]
    assert len(response.json()["secrets"]) == 5000


def test_default_limits_fit_an_ordinary_large_value() -> None:
    certificate = "-----BEGIN CERTIFICATE-----\n" + "A" * 200_000 + "\n-----END CERTIFICATE-----"
    doc = definition(file_secret("a", "out/x.env", kind="static", config={"value": "{{ var.c }}\n{{ var.c }}"}),
                     variables={"c": certificate})
    assert validate_document(doc, environ={}).errors == []
    assert InterpolationLimits().string_bytes == 1_048_576


def _only_worker(server: LiveServer) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text().split()
        if len(children) == 1:
            return int(children[0])
        time.sleep(0.05)
    raise AssertionError("the server has no single worker")


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmHWM for process {pid}")
