"""Server logs under gunicorn: each access line has the time, method, path, status, duration and
the API key's name (never the key), in text and in JSON (SERVICE_LOG_FORMAT=json)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.factories import definition, file_secret
from tests.processes.live import API_KEY, LiveServer, http, server_env

pytestmark = pytest.mark.slow

TEXT_ACCESS = re.compile(
    r"(?P<time>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z) INFO gunicorn\.access "
    r'(?P<client>\S+) "(?P<method>[A-Z]+) (?P<path>\S+) HTTP/1\.1" (?P<status>\d{3}) (?P<bytes>\S+) '
    r"(?P<duration>\d+\.\d+)s key=(?P<key>\S+)"
)


def serve(servers: Callable[..., LiveServer], tmp_path: Path, log_format: str) -> LiveServer:
    config = tmp_path / "Secretfile.yml"
    config.write_text(yaml.safe_dump(definition(file_secret("db_password"))))
    env = server_env(data_dir=tmp_path / "data", config=config, extra={"SERVICE_LOG_FORMAT": log_format})
    server = servers(env, tmp_path / "serve.log")
    assert server.call("GET", "/audit/logs?limit=1&since=2020-01-01T00:00:00Z")[0] == 200
    http("GET", server.url + "/secrets", headers={"X-API-Key": "wrong-key-5a1f"})
    return server


def log_lines(server: LiveServer) -> list[str]:
    server.stop()  # every line written and flushed
    return [line for line in server.log().splitlines() if line.strip()]


def test_text_access_lines_have_time_method_path_status_duration_and_key_name(
    servers: Callable[..., LiveServer], tmp_path: Path
) -> None:
    lines = log_lines(serve(servers, tmp_path, "text"))
    access = [m.groupdict() for line in lines if (m := TEXT_ACCESS.fullmatch(line))]
    audit = [a for a in access if a["path"] == "/audit/logs"]
    assert [(a["method"], a["status"], a["key"]) for a in audit] == [("GET", "200", "service")]
    refused = [a for a in access if a["path"] == "/secrets"]
    assert [(a["status"], a["key"]) for a in refused] == [("401", "-")]
    assert not any(API_KEY in line or "wrong-key-5a1f" in line or "since=" in line for line in lines)


def test_json_makes_every_line_one_object_access_lines_with_their_fields(
    servers: Callable[..., LiveServer], tmp_path: Path
) -> None:
    lines = log_lines(serve(servers, tmp_path, "json"))
    # Every line, the server's start and the app's own included, is one JSON object.
    records = [json.loads(line) for line in lines]
    assert all({"time", "level", "logger", "message"} <= set(r) for r in records)
    assert any(r["logger"] == "gunicorn.error" for r in records)
    audit = [r for r in records if r["logger"] == "gunicorn.access" and r["path"] == "/audit/logs"]
    assert [(r["method"], r["status"], r["key"]) for r in audit] == [("GET", 200, "service")]
    assert isinstance(audit[0]["duration_s"], float) and audit[0]["time"].endswith("Z")
    refused = [r for r in records if r["logger"] == "gunicorn.access" and r["path"] == "/secrets"]
    assert [(r["status"], r["key"]) for r in refused] == [(401, None)]
    assert not any(API_KEY in line or "wrong-key-5a1f" in line for line in lines)
