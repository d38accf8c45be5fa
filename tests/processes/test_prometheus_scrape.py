"""A real Prometheus scrapes a real ``serve`` with ``authorization: {type: Bearer, credentials_file}``:
the target is up, the service's figures (drift found, scrapes by key) are queryable from
Prometheus' HTTP API, and scrapes write no audit rows. ``promtool check metrics`` passes the
exposition."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.factories import definition, file_secret
from tests.processes.live import API_KEY, ROOT, LiveServer, server_env
from tests.processes.prometheus import Prometheus, prometheus
from tests.tools import require

pytestmark = pytest.mark.slow

# Scrapes every second: the target is up in a few; the bound is for a loaded host.
UP_DEADLINE_S = 60.0


def serve_with_drift(servers: Callable[..., LiveServer], tmp_path: Path) -> tuple[LiveServer, dict[str, str], float]:
    """A served project of two secrets, one edited by hand since the sync, drift-checked once
    (at a time after the one returned)."""
    config = tmp_path / "Secretfile.yml"
    config.write_text(yaml.safe_dump(definition(file_secret("db_password", "out/db.env"),
                                                file_secret("api_token", "out/api.env"))))
    env = server_env(data_dir=tmp_path / "data", config=config)
    server = servers(env, tmp_path / "serve.log")
    assert server.finished("/sync", {})[0] == 200
    (tmp_path / "out/db.env").write_text("db_password=edited-by-hand\n")
    before = time.time()
    status, found = server.finished("/drift/check", {})
    assert status == 200 and found["secrets_with_drift"] == ["db_password"]
    return server, env, before


def metrics_key(env: dict[str, str]) -> str:
    """A named key with only the metrics scope, made as an operator makes it."""
    made = subprocess.run([sys.executable, "manage.py", "apikey", "create", "prometheus", "--scope", "metrics"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True)
    return made.stdout.strip()


def until(condition: Callable[[], Any], what: str, prom: Prometheus) -> Any:
    end = time.monotonic() + UP_DEADLINE_S
    while time.monotonic() < end:
        found = condition()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"{what} within {UP_DEADLINE_S:.0f} s; target: {prom.target()}\n{prom.log()[-3000:]}")


def value(prom: Prometheus, expression: str) -> float | None:
    result = prom.query(expression)
    return float(result[0]["value"][1]) if result else None


def test_prometheus_scrapes_with_a_bearer_key_and_reads_the_drift_found(
        servers: Callable[..., LiveServer], tmp_path: Path) -> None:
    binary = require("prometheus")
    server, env, before = serve_with_drift(servers, tmp_path)
    credentials = tmp_path / "metrics.key"
    credentials.write_text(metrics_key(env) + "\n")  # as `echo "$KEY" > file` writes it
    credentials.chmod(0o600)
    with prometheus(binary, tmp_path / "prometheus", f"127.0.0.1:{server.port}", credentials) as prom:
        target = until(lambda: (t := prom.target()) is not None and t["health"] == "up" and t, "the target was up",
                       prom)
        assert target["lastError"] == ""
        assert value(prom, 'secretsapi_secrets_drifted{job="secretsapi"}') == 1
        assert before <= (value(prom, "secretsapi_last_drift_check_timestamp_seconds") or 0) <= time.time()
        # Counted once answered: from the second scrape on, Prometheus sees its own.
        scrapes = 'secretsapi_scrapes_total{key="prometheus",outcome="succeeded"}'
        until(lambda: (value(prom, scrapes) or 0) >= 1, "the scrapes were counted", prom)
    status, page = server.call("GET", "/audit/logs?action=read_metrics")
    assert status == 200 and page["entries"] == []


def test_promtool_finds_nothing_to_say_of_the_exposition(servers: Callable[..., LiveServer], tmp_path: Path) -> None:
    promtool = require("promtool")
    server, _, _ = serve_with_drift(servers, tmp_path)
    request = urllib.request.Request(server.url + "/metrics", headers={"Authorization": f"Bearer {API_KEY}"})
    for _ in range(2):  # the second sees the first scrape counted: every family has samples
        with urllib.request.urlopen(request, timeout=30) as response:
            exposition = response.read()
    drifted = rb'^secretsapi_secrets_drifted\{environment="",project="default"\} 1\.0$'
    assert re.search(drifted, exposition, re.MULTILINE)
    checked = subprocess.run([promtool, "check", "metrics"], input=exposition, capture_output=True, timeout=60,
                             check=False)
    assert checked.returncode == 0, (checked.stdout + checked.stderr).decode()
    assert checked.stdout.strip() == b"" and checked.stderr.strip() == b""



def test_prometheus_reads_each_projects_gauges_by_their_project_label(
        servers: Callable[..., LiveServer], tmp_path: Path) -> None:
    binary = require("prometheus")
    server, _, _ = serve_with_drift(servers, tmp_path)
    billing = tmp_path / "billing" / "Secretfile.yml"
    billing.parent.mkdir()
    billing.write_text(yaml.safe_dump(definition(file_secret("stripe_key", "out/stripe.env"))))
    assert server.call("POST", "/projects", {"name": "billing", "definition": str(billing)})[0] == 201
    assert server.finished("/projects/billing/sync", {})[0] == 200
    assert server.finished("/projects/billing/drift/check", {})[0] == 200
    credentials = tmp_path / "service.key"
    credentials.write_text(API_KEY + "\n")
    credentials.chmod(0o600)
    with prometheus(binary, tmp_path / "prometheus", f"127.0.0.1:{server.port}", credentials) as prom:
        until(lambda: (t := prom.target()) is not None and t["health"] == "up", "the target was up", prom)
        assert value(prom, 'secretsapi_secrets_drifted{project="default"}') == 1
        assert value(prom, 'secretsapi_secrets_drifted{project="billing"}') == 0
        assert value(prom, "count(secretsapi_rotation_check_ok == 1)") == 2
        assert value(prom, 'sum by (project) (secretsapi_operations_total{project="billing",operation="sync"})') == 1
