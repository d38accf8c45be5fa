"""Debian's Prometheus for tests: run from a temp folder on a loopback port, scraping one target
with a bearer key read from a file (as an operator configures it), stopped at the end.

Its HTTP API (``/api/v1/targets``, ``/api/v1/query``) is what the tests read: what a real
scraper made of the service's answers, not the answers themselves.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.processes.live import ROOT, free_port

START_DEADLINE_S = 60.0
JOB = "secretsapi"


@dataclass
class Prometheus:
    url: str
    log_path: Path

    def api(self, path: str, **query: str) -> Any:
        """``data`` of a successful API answer (``status: success``)."""
        address = f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(query)}"
        with urllib.request.urlopen(address, timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]

    def target(self) -> dict[str, Any] | None:
        """The scraped target's state (``health``, ``lastError``), or None before its first scrape."""
        active = [t for t in self.api("targets")["activeTargets"] if t["labels"].get("job") == JOB]
        return active[0] if active and active[0]["health"] != "unknown" else None

    def query(self, expression: str) -> list[dict[str, Any]]:
        """The instant vector ``expression`` evaluates to: ``[{"metric": labels, "value": [t, "v"]}]``."""
        result: list[dict[str, Any]] = self.api("query", query=expression)["result"]
        return result

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def documented_config() -> dict[str, Any]:
    """The scrape configuration docs/api.md gives operators (its "Metrics" section)."""
    text = (ROOT / "docs" / "api.md").read_text()
    block = re.search(r"<!-- prometheus scrape config -->\n```yaml\n(.*?)```\n<!-- end of prometheus", text, re.S)
    assert block, "docs/api.md: the Prometheus scrape config block is gone"
    config: dict[str, Any] = yaml.safe_load(block.group(1))
    return config


def scrape_config(target: str, credentials_file: Path) -> dict[str, Any]:
    """The documented one, scraping ``target`` with the key in ``credentials_file``, every 2 s."""
    config = documented_config()
    job = config["scrape_configs"][0]
    assert job["job_name"] == JOB and job["authorization"]["type"] == "Bearer"
    job["authorization"]["credentials_file"] = str(credentials_file)
    job["static_configs"] = [{"targets": [target]}]
    config["global"] = {"scrape_interval": "2s", "scrape_timeout": "2s", "evaluation_interval": "2s"}
    return config


@contextlib.contextmanager
def prometheus(binary: str, folder: Path, target: str, credentials_file: Path) -> Iterator[Prometheus]:
    """A Prometheus scraping ``target`` (host:port) every second; killed, with its group, at the end."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "prometheus.yml"
    config.write_text(yaml.safe_dump(scrape_config(target, credentials_file)))
    log_path = folder / "prometheus.log"
    for _attempt in range(3):
        port = free_port()
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [binary, f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
                 f"--web.listen-address=127.0.0.1:{port}"],
                cwd=folder, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        server = Prometheus(f"http://127.0.0.1:{port}", log_path)
        try:
            if _ready(proc, server):
                yield server
                return
        finally:
            _stop(proc)
        if "address already in use" not in server.log():
            break
    raise AssertionError(f"prometheus did not start; its log:\n{server.log()[-4000:]}")


def _ready(proc: subprocess.Popen[bytes], server: Prometheus) -> bool:
    end = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        with contextlib.suppress(OSError), urllib.request.urlopen(server.url + "/-/ready", timeout=2) as response:
            if response.status == 200:
                return True
        time.sleep(0.1)
    return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=wait)
