"""Definition files built to exhaust the server (alias bombs, huge files, deep nesting) get a
clear 422 (an invalid definition, never a server failure) with the error body, quickly and
without a memory blow-up; nothing is written."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.asserts import assert_error_body
from tests.factories import Project
from tests.processes.live import LiveServer, server_env

BOUND_S = 5.0
# The tests configure a smaller definition limit than the default (16 MiB), so "too large"
# also proves SERVICE_MAX_DEFINITION_BYTES is honoured.
LIMIT = 1_048_576


def billion_laughs(levels: int = 10) -> str:
    lines = ["version: '1.0'", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefghijk"[: levels - 1]:
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    lines.append(f"secrets: [{{name: x, kind: static, config: {{value: *{previous}}}}}]")
    return "\n".join(lines) + "\n"


def many_aliases(uses: int = 20_000) -> str:
    return "version: '1.0'\nv: &v x\nsecrets: []\nlist: [" + ", ".join(["*v"] * uses) + "]\n"


HOSTILE: dict[str, tuple[Callable[[], str | bytes], str]] = {
    "billion_laughs": (billion_laughs, "alias"),
    "alias_flood": (many_aliases, "alias"),
    "recursive_alias": (lambda: "version: '1.0'\nsecrets: &s [*s]\n", "recursive"),
    "deep_nesting": (lambda: "version: '1.0'\nsecrets: " + "[" * 50_000 + "]" * 50_000 + "\n", "nested"),
    "too_large": (lambda: "version: '1.0'\nsecrets: []\n# " + "x" * (LIMIT + 10) + "\n", "too large"),
    "not_utf8": (lambda: b"version: '1.0'\nsecrets: [\xff\xfe]\n", "UTF-8"),
}


# Deep nesting is tried only against a real server (below): if it crashes the parser, it must
# take down a gunicorn worker the test can observe, not the test runner.
IN_PROCESS = sorted(set(HOSTILE) - {"deep_nesting"})


@pytest.mark.parametrize("kind", IN_PROCESS)
@pytest.mark.parametrize(("method", "path"), [("get", "/secrets"), ("post", "/sync"), ("post", "/drift/check")])
def test_a_hostile_definition_is_a_quick_422_with_the_error_body_and_writes_nothing(
    authed_api: APIClient, project: Project, settings: Any, kind: str, method: str, path: str
) -> None:
    settings.SERVICE_MAX_DEFINITION_BYTES = LIMIT
    build, words = HOSTILE[kind]
    content = build()
    if isinstance(content, bytes):
        project.definition.write_bytes(content)
    else:
        project.write(content)
    started = time.monotonic()
    response = getattr(authed_api, method)(path, {}, format="json") if method == "post" else authed_api.get(path)
    elapsed = time.monotonic() - started
    body = assert_error_body(response, 422)
    assert words.lower() in body["detail"].lower()
    assert "lol" not in body["detail"]  # errors name the problem, never the content
    assert elapsed < BOUND_S
    assert sorted(p.name for p in project.root.iterdir()) == ["Secretfile.yml"]


@pytest.mark.parametrize(("method", "path"), [("get", "/secrets"), ("post", "/config/render"),
                                             ("post", "/sync")])
def test_a_huge_definition_file_is_refused_without_reading_it_into_memory(
    authed_api: APIClient, project: Project, method: str, path: str
) -> None:
    # The same request once on a small definition first: what it imports the first time (the
    # URLs, the engine, the apps' modules) is not what the bound is about.
    project.write("version: '1.0'\nsecrets: []\n")
    authed_api.get(path) if method == "get" else authed_api.post(path, {}, format="json")
    with open(project.definition, "wb") as handle:
        handle.truncate(256 * 1024 * 1024)  # sparse: costs no disk
    tracemalloc.start()
    try:
        response = authed_api.get(path) if method == "get" else authed_api.post(path, {}, format="json")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "too large" in assert_error_body(response, 422)["detail"]
    assert peak < 32 * 1024 * 1024


def test_a_huge_var_file_is_refused_without_reading_it_into_memory(
    authed_api: APIClient, project: Project
) -> None:
    project.write("version: '1.0'\nsecrets:\n- {name: a, kind: random_hex, targets: []}\n")
    project.declare("vars.yml")
    with open(project.root / "vars.yml", "wb") as handle:
        handle.truncate(256 * 1024 * 1024)
    tracemalloc.start()
    try:
        response = authed_api.post("/config/render", {"var_files": ["vars.yml"]}, format="json")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "too large" in assert_error_body(response, 400)["detail"]
    assert peak < 32 * 1024 * 1024


def test_a_var_file_bomb_is_refused_like_a_definition_bomb(authed_api: APIClient, project: Project) -> None:
    project.write("version: '1.0'\nsecrets:\n- {name: a, kind: random_hex, targets: []}\n")
    (project.root / "vars.yml").write_text(billion_laughs())
    project.declare("vars.yml")
    started = time.monotonic()
    response = authed_api.post("/sync", {"var_files": ["vars.yml"]}, format="json")
    assert response.status_code in (400, 422)
    assert_error_body(response, response.status_code)
    assert time.monotonic() - started < BOUND_S
    assert not project.lockfile.exists()


@pytest.mark.slow
def test_no_hostile_definition_crashes_or_stalls_a_real_server(
    tmp_path: Path, servers: Callable[..., LiveServer]
) -> None:
    definition = tmp_path / "Secretfile.yml"
    definition.write_text("version: '1.0'\nsecrets: []\n")
    env = server_env(data_dir=tmp_path / "data", config=definition,
                     extra={"SERVICE_MAX_DEFINITION_BYTES": str(LIMIT)})
    server = servers(env, tmp_path / "serve.log")
    for kind in sorted(HOSTILE):
        build, words = HOSTILE[kind]
        content = build()
        definition.write_bytes(content if isinstance(content, bytes) else content.encode())
        started = time.monotonic()
        try:
            status, body = server.call("GET", "/secrets", timeout=BOUND_S * 4)
        except OSError as exc:
            log = server.log()[-2000:]
            raise AssertionError(f"{kind}: the server dropped the request ({exc}); log:\n{log}") from None
        assert status == 422 and set(body) == {"error", "detail", "timestamp"}, (kind, body)
        assert words.lower() in body["detail"].lower(), (kind, body)
        assert time.monotonic() - started < BOUND_S, kind
    log = server.log()
    assert log.count("Booting worker") == 1 and "SIGSEGV" not in log and "was sent" not in log, log[-2000:]
