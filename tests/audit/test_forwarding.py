"""SERVICE_AUDIT_FORWARD: each new audit row reaches a syslog server (RFC 5424, UDP and TCP) or a
JSON-lines file, and a sink that is down costs a logged warning, never the operation."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from audit import origin
from audit.forwarding import Sink
from audit.recorder import record

DEADLINE_S = 20.0
ROOT = Path(__file__).resolve().parents[2]

# RFC 5424, section 6: HEADER SP STRUCTURED-DATA [SP MSG], with NILVALUE "-" where allowed.
RFC5424 = re.compile(
    r"<(?P<pri>\d{1,3})>(?P<version>[1-9]\d{0,2}) "
    r"(?P<timestamp>-|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})) "
    r"(?P<hostname>[!-~]{1,255}) (?P<app>[!-~]{1,48}) (?P<procid>[!-~]{1,128}) (?P<msgid>[!-~]{1,32}) "
    r"(?P<sd>-|(?:\[[^\]]*\])+)(?: (?P<msg>.*))?",
    re.DOTALL,
)
AUTHPRIV = 10
INFO, WARNING = 6, 4


def parse(message: bytes) -> dict[str, Any]:
    match = RFC5424.fullmatch(message.decode())
    assert match, f"not RFC 5424: {message!r}"
    return match.groupdict()


def committed(call: Callable[[], Any]) -> Any:
    """Rows are forwarded once their transaction commits: run the test transaction's commit hooks."""
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        return call()


def until(check: Callable[[], Any]) -> Any:
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        if found := check():
            return found
        time.sleep(0.05)
    raise AssertionError(f"nothing within {DEADLINE_S} s")


@pytest.mark.server
def test_a_row_reaches_a_udp_syslog_server_as_rfc_5424(db: None, settings: Any) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server:
        server.bind(("127.0.0.1", 0))
        server.settimeout(DEADLINE_S)
        settings.AUDIT_FORWARD = Sink("syslog", transport="udp", host="127.0.0.1", port=server.getsockname()[1])
        committed(lambda: record(action="sync", resource="secret:db", user="ci", success=True,
                                 details={"generated": ["db"]}))
        message = parse(server.recv(65536))
    assert int(message["pri"]) == AUTHPRIV * 8 + INFO
    assert message["version"] == "1" and message["app"] == "secretsapi" and message["msgid"] == "sync"
    entry = json.loads(message["msg"])
    assert entry == {"timestamp": message["timestamp"], "action": "sync", "resource": "secret:db", "user": "ci",
                     "details": {"generated": ["db"]}, "success": True, "outcome": "ok", "project": None,
                     "definition_project": None, "definition": None, "environment": None,
                     "origin": origin.process_origin()}


@pytest.mark.server
def test_a_failed_row_is_a_warning_over_tcp_one_message_per_line(db: None, settings: Any) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(DEADLINE_S)
        settings.AUDIT_FORWARD = Sink("syslog", transport="tcp", host="127.0.0.1", port=listener.getsockname()[1])
        committed(lambda: record(action="rotate_secrets", resource="secrets", user="ci", success=False,
                                 details={"error": "x"}))
        committed(lambda: record(action="check_drift", resource="secrets", user="ci", success=True))
        connection, _ = listener.accept()
        with connection, connection.makefile("rb") as stream:
            connection.settimeout(DEADLINE_S)
            first, second = parse(stream.readline().rstrip(b"\n")), parse(stream.readline().rstrip(b"\n"))
    assert int(first["pri"]) == AUTHPRIV * 8 + WARNING and first["msgid"] == "rotate_secrets"
    assert json.loads(first["msg"])["success"] is False
    assert second["msgid"] == "check_drift"


@pytest.mark.server
def test_an_operation_succeeds_while_the_syslog_server_is_down_and_a_warning_says_so(
    db: None, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: connections are refused
        settings.AUDIT_FORWARD = Sink("syslog", transport="tcp", host="127.0.0.1", port=port)
        with caplog.at_level(logging.WARNING, logger="audit.forwarding"):
            assert committed(lambda: record(action="sync", resource="secrets", user="ci", success=True))
            warning = until(lambda: [r.getMessage() for r in caplog.records if r.name == "audit.forwarding"])
    assert f"syslog+tcp://127.0.0.1:{port} failed" in warning[0]
    assert "are in the audit log" in warning[0]


def test_a_row_is_appended_to_the_file_sink_as_one_json_line_in_a_0600_file(
    db: None, settings: Any, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    settings.AUDIT_FORWARD = Sink("file", path=str(path))
    committed(lambda: record(action="sync", resource="secrets", user="ci", success=True,
                             details={"generated": ["a", "b"]}))
    committed(lambda: record(action="check_policy", resource="secrets", user="ci", success=True))
    lines = until(lambda: path.exists() and len(path.read_text().splitlines()) == 2 and path.read_text().splitlines())
    assert [json.loads(line)["action"] for line in lines] == ["sync", "check_policy"]
    assert json.loads(lines[0])["details"] == {"generated": ["a", "b"]}
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_the_file_sink_never_writes_through_a_symlink(
    db: None, settings: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("")
    (tmp_path / "audit.jsonl").symlink_to(elsewhere)
    settings.AUDIT_FORWARD = Sink("file", path=str(tmp_path / "audit.jsonl"))
    with caplog.at_level(logging.WARNING, logger="audit.forwarding"):
        assert committed(lambda: record(action="sync", resource="secrets", user="ci", success=True))
        until(lambda: [r for r in caplog.records if r.name == "audit.forwarding"])
    assert elsewhere.read_text() == ""


def test_a_row_that_begins_is_forwarded_once_with_its_outcome(
    db: None, settings: Any, tmp_path: Path
) -> None:
    from audit.recorder import begin, finish

    path = tmp_path / "audit.jsonl"
    settings.AUDIT_FORWARD = Sink("file", path=str(path))
    row = committed(lambda: begin(action="sync", resource="secrets", user="ci"))
    committed(lambda: finish(row, success=True, details={"generated": ["a"]}))
    committed(lambda: record(action="marker", resource="secrets", user="ci", success=True))
    lines = until(lambda: path.exists() and len(path.read_text().splitlines()) == 2 and path.read_text().splitlines())
    assert [(json.loads(x)["action"], json.loads(x)["details"]) for x in lines] == [
        ("sync", {"generated": ["a"]}), ("marker", {})]


@pytest.mark.slow
def test_a_command_sends_its_rows_before_it_exits(tmp_path: Path) -> None:
    sink = tmp_path / "audit.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    env.update({"SERVICE_DATA_DIR": str(tmp_path / "data"), "SERVICE_AUDIT_FORWARD": f"file://{sink}"})
    subprocess.run([sys.executable, "manage.py", "audit", "--action", "nothing"], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=120)
    assert [json.loads(line)["action"] for line in sink.read_text().splitlines()] == ["export_audit_logs"]
