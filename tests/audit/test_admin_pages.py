"""The auditor's admin: which secrets a row touched, readable details, zones, keys made there, the
secrets overview and the charts (the same pages in a real browser: tests/audit/test_admin_browser.py)."""

from __future__ import annotations

import html
import re
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from apikeys import keys
from apikeys.models import ApiKey
from audit.models import AuditEntry
from audit.recorder import record
from secretsapi.actions import checks, workspaces
from tests.factories import LOCAL_HOST, Project, definition, file_secret


@pytest.fixture
def admin_client(db: None) -> Client:
    client = Client(HTTP_HOST=LOCAL_HOST)
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-for-tests"))
    return client


@pytest.fixture
def synced(project: Project) -> Project:
    project.write(definition(file_secret("db", "out/a.env", rotation_period="30d"),
                             file_secret("api", "out/b.env", rotation_period="90d"),
                             file_secret("static", "out/c.env", one_time=True)))
    call_command("sync", stdout=StringIO())
    return project


def text(response: object) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))  # type: ignore[attr-defined]


def test_a_bulk_row_lists_the_secrets_it_touched(admin_client: Client, synced: Project) -> None:
    response = admin_client.get("/admin/audit/auditentry/?action=sync")
    assert re.search(r'href="\?secret=db">db</a>', response.content.decode())


def test_the_secret_filter_finds_bulk_rows_by_their_mentions(admin_client: Client, synced: Project) -> None:
    record(action="check_drift", resource="secret:other", user="t", success=True)
    rows = admin_client.get("/admin/audit/auditentry/?secret=api").context["cl"].result_list
    assert [(r.action, r.resource) for r in rows] == [("sync", "secrets")]


def test_a_failed_row_shows_its_message_beside_its_code(admin_client: Client, synced: Project) -> None:
    entry = AuditEntry.objects.get(pk=record(
        action="sync", resource="secret:nope", user="t", success=False,
        details={"error": "secret_not_defined", "message": "secret 'nope' is not defined in the definition file"}))
    page = text(admin_client.get(f"/admin/audit/auditentry/{entry.pk}/change/"))
    assert "failed: secret_not_defined: secret 'nope' is not defined in the definition file" in page


def test_details_are_keys_and_values_with_lists(admin_client: Client, synced: Project) -> None:
    entry = AuditEntry.objects.get(action="sync")
    content = admin_client.get(f"/admin/audit/auditentry/{entry.pk}/change/").content.decode()
    assert re.search(r"<dt>generated</dt><dd><ul><li>db</li><li>api</li><li>static</li></ul></dd>", content)


def test_times_show_their_zone(admin_client: Client, synced: Project) -> None:
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", text(admin_client.get("/admin/audit/auditentry/")))


def test_scopes_show_as_labels(admin_client: Client) -> None:
    keys.create("ci", ["read", "audit"])
    content = admin_client.get("/admin/apikeys/apikey/").content.decode()
    assert '<span class="scope-label">audit</span> <span class="scope-label">read</span>' in content
    assert "[&quot;" not in content


def test_a_key_made_in_the_admin_is_shown_once_stored_hashed_and_audited(admin_client: Client) -> None:
    response = admin_client.post("/admin/apikeys/apikey/add/", {"name": "ci", "scopes": ["read"], "expires_in": "90d"})
    key = re.search(r'<code id="issued-key"[^>]*>(sk_[^<]+)</code>', response.content.decode())
    assert key and "no-store" in response["Cache-Control"]
    assert keys.resolve(key.group(1)) is not None
    assert key.group(1).split("_", 2)[2] not in str(list(ApiKey.objects.values()))
    row = AuditEntry.objects.get(action="apikey_create")
    assert (row.user, row.resource) == ("admin:root", "apikey:ci")
    assert key.group(1) not in admin_client.get("/admin/apikeys/apikey/").content.decode()


def test_the_admin_refuses_an_expiry_with_a_bare_m_asking_minutes_or_months(admin_client: Client) -> None:
    response = admin_client.post("/admin/apikeys/apikey/add/", {"name": "ci", "scopes": ["read"], "expires_in": "30m"})
    assert "write 30min for minutes or 30mo for months" in text(response)
    assert not ApiKey.objects.filter(name="ci").exists()


def test_the_admin_refuses_a_reserved_key_name(admin_client: Client) -> None:
    response = admin_client.post("/admin/apikeys/apikey/add/", {"name": "CLI:root", "scopes": ["read"]})
    assert "are reserved" in text(response)
    assert not ApiKey.objects.exists()


def test_a_wrong_admin_url_is_an_html_page(admin_client: Client) -> None:
    response = admin_client.get("/admin/no/such/page/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")
    assert "There is no admin page at" in text(response)


def test_a_wrong_api_url_stays_json(admin_client: Client) -> None:
    response = admin_client.get("/no/such/endpoint")
    assert response.status_code == 404 and response.json()["error"]


def test_the_overview_shows_each_secret_due_date_and_overdue(admin_client: Client, synced: Project) -> None:
    synced.backdate("db", 40)
    page = text(admin_client.get("/admin/audit/auditentry/secrets/"))
    assert "3 of 3 secrets shown" in page
    assert re.search(r"db random_password local/file\S* generated never \S+ \S+ UTC overdue not checked", page)


def test_the_overview_filters_overdue_secrets(admin_client: Client, synced: Project) -> None:
    synced.backdate("db", 40)
    response = admin_client.get("/admin/audit/auditentry/secrets/?overdue=yes")
    assert [row["name"] for row in response.context["rows"]] == ["db"]


def test_the_overview_shows_the_last_drift_result(admin_client: Client, synced: Project) -> None:
    (synced.root / "out" / "a.env").write_text("DB=changed\n")
    checks.check_drift(workspaces.workspace(), actor="t")
    response = admin_client.get("/admin/audit/auditentry/secrets/?drift=drifted")
    assert [row["name"] for row in response.context["rows"]] == ["db"]


def test_the_overview_is_audited_through_the_actions(admin_client: Client, synced: Project) -> None:
    admin_client.get("/admin/audit/auditentry/secrets/")
    row = AuditEntry.objects.get(action="read_secrets_overview")
    assert (row.user, row.details["count"]) == ("admin:root", 3)


def test_the_charts_are_inline_svg_with_titles_and_axis_labels(admin_client: Client, synced: Project) -> None:
    content = admin_client.get("/admin/audit/auditentry/charts/").content.decode()
    assert content.count('<svg id="') == 3 and not re.search(r'(src|href)="(https?:)?//', content)
    assert '<title id="operations-title">Operations per day by outcome, last 30 days</title>' in content
    assert 'class="y-label"' in content and ">audit rows</text>" in content
    assert re.search(r"<title>\d\d-\d\d: \d+ succeeded</title>", content)


@pytest.fixture
def staff_client(db: None) -> Client:
    """A staff login without any permission."""
    client = Client(HTTP_HOST=LOCAL_HOST)
    client.force_login(User.objects.create_user("clerk", "clerk@example.com", "pw-for-tests", is_staff=True))
    return client


@pytest.mark.parametrize("page", ["secrets", "charts"])
def test_the_overview_and_charts_need_the_permission_to_view_audit_rows(staff_client: Client, page: str) -> None:
    assert staff_client.get(f"/admin/audit/auditentry/{page}/").status_code == 403
    assert not AuditEntry.objects.filter(action__in=["read_secrets_overview", "read_audit_activity"]).exists()


def test_a_key_cannot_be_made_without_the_permission_to_add_keys(staff_client: Client) -> None:
    response = staff_client.post("/admin/apikeys/apikey/add/", {"name": "ci", "scopes": ["read"]})
    assert response.status_code == 403 and not ApiKey.objects.exists()
