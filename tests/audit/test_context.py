"""Every audit row names where it ran (definition, project, environment) and where the call came from."""

from __future__ import annotations

import csv
import io
import json
import socket
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from audit import origin
from audit.models import AuditEntry
from secretsapi import operations
from tests.factories import Project, definition, file_secret


def _project(project: Project) -> Project:
    """Two environments (``staging`` the default) and ``metadata.project``."""
    (project.root / "prod.yml").write_text("env: prod\n")
    return project.write(definition(
        file_secret("db_password", "out/{{ var.env }}.env"),
        metadata={"project": "payments"}, variables={"env": "staging"},
        environments={"default": "staging", "profiles": {"staging": {}, "production": {"var_files": ["prod.yml"]}}},
    ))


def _last(action: str) -> AuditEntry:
    row = AuditEntry.objects.filter(action=action).order_by("-id").first()
    assert row is not None, f"no {action} row"
    return row


def test_an_api_sync_row_names_the_definition_project_environment_and_client(
    authed_api: APIClient, project: Project
) -> None:
    _project(project)
    response = authed_api.post("/sync", {"environment": "production"}, format="json", REMOTE_ADDR="198.51.100.7")
    assert response.status_code == 200, response.content
    row = _last("sync")
    assert (row.definition, row.definition_project, row.environment) == (str(project.definition), "payments",
                                                                          "production")
    assert row.project == "default"
    assert row.origin == "client:198.51.100.7"
    assert row.outcome == "ok"


def test_a_row_without_a_named_environment_names_the_definitions_default(
    authed_api: APIClient, project: Project
) -> None:
    _project(project)
    assert authed_api.get("/secrets").status_code == 200
    row = _last("list_secrets")
    assert (row.project, row.definition_project, row.environment) == ("default", "payments", "staging")


def test_behind_the_proxy_the_row_names_the_forwarded_client_not_the_proxy(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    _project(project)
    settings.SERVICE_BEHIND_PROXY = True
    authed_api.get("/secrets", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.40")
    assert _last("list_secrets").origin == "client:203.0.113.40"


def test_served_directly_a_forwarded_header_is_not_believed(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    _project(project)
    settings.SERVICE_BEHIND_PROXY = False
    authed_api.get("/secrets", REMOTE_ADDR="192.0.2.8", HTTP_X_FORWARDED_FOR="203.0.113.40")
    assert _last("list_secrets").origin == "client:192.0.2.8"


def test_a_refused_request_names_its_client(api: APIClient, project: Project) -> None:
    api.get("/secrets", REMOTE_ADDR="192.0.2.99")
    assert _last("authenticate").origin == "client:192.0.2.99"


def test_a_job_the_api_asked_for_names_the_requests_client(
    authed_api: APIClient, project: Project
) -> None:
    _project(project)
    response = authed_api.post("/sync", {"async": True}, format="json", REMOTE_ADDR="198.51.100.23")
    assert response.status_code in (200, 202), response.content
    assert _last("sync").origin == "client:198.51.100.23"


def test_a_scheduled_job_names_the_worker_that_ran_it(db: None, project: Project) -> None:
    _project(project)
    operations.enqueue("check_drift", {"secret_name": None, "var_files": []}, actor="scheduler")
    row = _last("check_drift")
    assert row.user == "scheduler"
    assert row.origin.startswith("worker:") and (row.project, row.definition_project) == ("default", "payments")


def test_a_command_names_the_os_user_and_host(db: None, project: Project, capsys: Any) -> None:
    _project(project)
    call_command("sync", "--environment", "production")
    row = _last("sync")
    assert row.origin == origin.process_origin()
    assert row.origin.endswith(f"@{socket.gethostname()}") and row.origin.startswith("cli:")
    assert (row.project, row.definition_project, row.environment) == ("default", "payments", "production")


def test_the_audit_api_shows_the_context_fields(authed_api: APIClient, project: Project) -> None:
    _project(project)
    authed_api.post("/sync", {}, format="json", REMOTE_ADDR="198.51.100.7")
    entries = authed_api.get("/audit/logs", {"action": "sync"}).json()["entries"]
    assert entries[0]["project"] == "default" and entries[0]["definition_project"] == "payments"
    assert entries[0]["environment"] == "staging"
    assert entries[0]["definition"] == str(project.definition)
    assert entries[0]["origin"] == "client:198.51.100.7" and entries[0]["outcome"] == "ok"
    # The spec's six fields are all there, unchanged.
    assert {"timestamp", "action", "resource", "user", "details", "success"} <= set(entries[0])


def test_a_row_older_than_the_context_fields_reads_as_before(authed_api: APIClient) -> None:
    AuditEntry.objects.create(action="sync", resource="secrets", user="ci", success=False, details={})
    (entry,) = list(authed_api.get("/audit/logs", {"user": "ci"}).json()["entries"])
    assert entry["outcome"] == "failed"
    assert entry["project"] is None and entry["origin"] is None and entry["environment"] is None


def test_the_command_exports_carry_the_context_fields(db: None, project: Project, capsys: Any) -> None:
    _project(project)
    call_command("sync")
    capsys.readouterr()
    call_command("audit", "--action", "sync", "--format", "jsonl")
    line = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (line["project"], line["definition_project"]) == ("default", "payments")
    assert (line["environment"], line["origin"]) == ("staging", origin.process_origin())
    call_command("audit", "--action", "sync", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert (rows[-1]["project"], rows[-1]["definition_project"]) == ("default", "payments")
    assert rows[-1]["outcome"] == "ok"
    assert rows[-1]["definition"] == str(project.definition)


@pytest.mark.parametrize("forwarded", ["203.0.113.5", "10.0.0.1, 203.0.113.5", "::ffff:203.0.113.5"])
def test_the_client_is_the_last_forwarded_address(forwarded: str) -> None:
    assert origin.client(forwarded) == "client:203.0.113.5"
