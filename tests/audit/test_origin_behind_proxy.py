"""Behind the shipped nginx (deploy/nginx/), a row names the client that reached the proxy: not the
proxy, and not an ``X-Forwarded-For`` the client wrote itself."""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.processes.live import API_KEY, LiveServer, many_secrets, server_env, servers, write_definition
from tests.processes.proxy import Proxy, proxies

__all__ = ["proxies", "servers"]  # the fixtures this module uses

pytestmark = pytest.mark.slow

CLIENT = "127.0.0.3"


def _get(proxy: Proxy, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30, source_address=(CLIENT, 0))
    try:
        connection.request("GET", path, headers={"X-API-Key": API_KEY, **headers})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def test_a_row_names_the_client_the_proxy_saw(tmp_path: Path, servers: Callable[..., LiveServer],
                                             proxies: Callable[..., Proxy]) -> None:
    definition = write_definition(tmp_path, {**many_secrets(1, files=1), "metadata": {"project": "payments"}})
    env = server_env(data_dir=tmp_path / "data", config=definition, extra={"SERVICE_BEHIND_PROXY": "true"})
    proxy = proxies(servers(env, tmp_path / "serve.log").port)
    status, _ = _get(proxy, "/secrets", {"X-Forwarded-For": "203.0.113.66"})  # a forged header
    assert status == 200
    status, body = _get(proxy, "/audit/logs?action=list_secrets", {})
    assert status == 200
    (entry,) = body["entries"]
    assert entry["origin"] == f"client:{CLIENT}"
    assert (entry["definition_project"], entry["definition"]) == ("payments", str(definition))
