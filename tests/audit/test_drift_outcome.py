"""A drift check that found drift is its own outcome (``drift``, not ``ok``): in the row, the API,
the admin list (a warning), the charts, and the forwarded syslog line's severity. And a failed
operation shows its first error in the admin list."""

from __future__ import annotations

import html
import re
import socket
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from audit import activity
from audit.forwarding import Sink
from audit.models import AuditEntry
from tests.audit.test_forwarding import AUTHPRIV, DEADLINE_S, INFO, WARNING, committed, parse
from tests.factories import LOCAL_HOST, Project, definition, file_secret


@pytest.fixture
def admin_client(db: None) -> Client:
    client = Client(HTTP_HOST=LOCAL_HOST)
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-for-tests"))
    return client


@pytest.fixture
def drifted(project: Project) -> Project:
    project.write(definition(file_secret("db_password", "out/a.env"), file_secret("api_key", "out/b.env")))
    call_command("sync", stdout=StringIO())
    (project.root / "out/a.env").write_text("DB_PASSWORD=edited-by-hand\n")
    return project


def _text(response: Any) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def test_a_drift_check_that_found_drift_is_recorded_as_drift_not_ok(authed_api: APIClient, drifted: Project) -> None:
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is True
    row = AuditEntry.objects.filter(action="check_drift").latest("id")
    assert (row.outcome, row.success) == ("drift", True)
    (entry,) = authed_api.get("/audit/logs", {"action": "check_drift"}).json()["entries"]
    assert entry["outcome"] == "drift"


def test_a_drift_check_without_drift_is_ok(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db_password", "out/a.env")))
    call_command("sync", stdout=StringIO())
    authed_api.post("/drift/check", {}, format="json")
    assert AuditEntry.objects.filter(action="check_drift").latest("id").outcome == "ok"


def test_the_admin_list_shows_drift_as_a_warning_naming_the_secrets(
    admin_client: Client, authed_api: APIClient, drifted: Project
) -> None:
    authed_api.post("/drift/check", {}, format="json")
    page = admin_client.get("/admin/audit/auditentry/?action=check_drift").content.decode()
    assert re.search(r'class="audit-warning"[^>]*>\S+ drift: 1 secret\(s\): db_password<', html.unescape(page))
    warned = admin_client.get("/admin/audit/auditentry/?outcome=drift").context["cl"].result_list
    assert [r.action for r in warned] == ["check_drift"]
    assert not admin_client.get("/admin/audit/auditentry/?outcome=ok&action=check_drift").context["cl"].result_list


def test_the_charts_count_drift_apart_from_success(authed_api: APIClient, drifted: Project) -> None:
    authed_api.post("/drift/check", {}, format="json")
    today = activity.activity(1).operations[-1]
    checks = AuditEntry.objects.filter(action="check_drift").count()
    assert today.drift == checks == 1
    assert today.ok == AuditEntry.objects.filter(success=True).count() - 1


def test_the_charts_page_has_a_drift_series(admin_client: Client, authed_api: APIClient, drifted: Project) -> None:
    authed_api.post("/drift/check", {}, format="json")
    page = admin_client.get("/admin/audit/auditentry/charts/").content.decode()
    assert re.search(r"<title>[^<]*: 1 drift found \(warning\)</title>", page)


@pytest.mark.server
def test_drift_found_is_forwarded_at_warning_severity(authed_api: APIClient, drifted: Project, settings: Any) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server:
        server.bind(("127.0.0.1", 0))
        server.settimeout(DEADLINE_S)
        settings.AUDIT_FORWARD = Sink("syslog", transport="udp", host="127.0.0.1", port=server.getsockname()[1])
        committed(lambda: authed_api.post("/drift/check", {}, format="json"))
        check = parse(server.recv(65536))
        committed(lambda: call_command("sync", "--force", stdout=StringIO()))  # a new value everywhere: no drift
        committed(lambda: authed_api.post("/drift/check", {}, format="json"))
        messages = [parse(server.recv(65536)) for _ in range(2)]  # the sync's row, then the check's
    assert check["msgid"] == "check_drift" and int(check["pri"]) == AUTHPRIV * 8 + WARNING
    assert '"outcome":"drift"' in check["msg"]
    (clean,) = [m for m in messages if m["msgid"] == "check_drift"]
    assert int(clean["pri"]) == AUTHPRIV * 8 + INFO and '"outcome":"ok"' in clean["msg"]


def test_the_admin_list_shows_a_failed_syncs_first_error(
    admin_client: Client, authed_api: APIClient, project: Project
) -> None:
    (project.root / "busy").mkdir()  # a folder where a file should be: that target fails
    project.write(definition({**file_secret("db", "out/a.env"),
                              "targets": [{"provider": "local", "kind": "file", "config": {"path": "busy"}}]}))
    authed_api.post("/sync", {}, format="json")
    row = AuditEntry.objects.filter(action="sync").latest("id")
    assert row.success is False and row.details["errors"]
    message = row.details["errors"][0]["message"]
    page = _text(admin_client.get("/admin/audit/auditentry/?action=sync"))
    assert f"failed: db at {row.details['errors'][0]['target']}: {message}" in page
