"""Generated values appear in their targets and nowhere else: not in the lockfile, the audit
log, the logs or any response of a full workflow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, definition, file_secret


def values_in(root: Path) -> set[str]:
    found: set[str] = set()
    for path in (root / "out").glob("*.json"):
        found.update(v for v in json.loads(path.read_text()).values() if isinstance(v, str))
    return found


def test_full_workflow_leaks_no_generated_value(
    authed_api: APIClient, project: Project, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level("DEBUG")
    project.write(definition(
        file_secret("db_password", "out/a.json", rotation_period="30d"),
        file_secret("api_key", "out/a.json", kind="random_hex", rotation_period="90d"),
        file_secret("token", "out/b.json", kind="random_string", one_time=True),
        file_secret("other", "out/b.json", kind="uuid"),
        policies={"p": {"kind": "rotation", "require_rotation_period": True, "max_age": "60d"}},
        metadata={"compliance": ["soc2"]},
    ))
    responses: list[bytes] = []
    seen: set[str] = set()

    def call(method: str, path: str, body: dict | None = None) -> None:  # type: ignore[type-arg]
        send = getattr(authed_api, method)
        response = send(path, body, format="json") if body is not None else send(path)
        responses.append(response.content)
        seen.update(values_in(project.root) if (project.root / "out").exists() else set())

    call("post", "/sync", {})
    call("get", "/secrets")
    call("get", "/secrets/db_password/status")
    call("post", "/sync", {"force": True})
    call("post", "/sync", {"dry_run": True})
    call("post", "/rotation/check", {})
    project.backdate("db_password", 45)
    call("post", "/rotation/execute", {})
    call("post", "/rotation/execute", {"force": True})
    call("post", "/policy/check", {"fail_on_warning": True})
    data = json.loads((project.root / "out/a.json").read_text())
    data["api_key"] = "edited-by-hand"
    (project.root / "out/a.json").write_text(json.dumps(data))
    call("post", "/drift/check", {})
    static = {"name": "x", "kind": "static", "config": {"value": "not-generated"}}
    call("post", "/config/validate", {"config": {"version": "1", "secrets": [static]}})
    call("post", "/sync", {"secret_name": "missing"})
    call("get", "/audit/logs?limit=1000")

    assert len(seen) >= 8  # four secrets, several generations each
    haystacks = {
        "lockfile": project.lockfile.read_text(),
        "audit": json.dumps([row.details for row in AuditEntry.objects.all()]),
        "logs": caplog.text + "".join(capsys.readouterr()),
        "responses": b"\n".join(responses).decode(),
    }
    for value in seen:
        for where, text in haystacks.items():
            assert value not in text, f"a generated value leaked into {where}"
