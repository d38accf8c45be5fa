"""``manage.py webhook``: endpoints added, listed, disabled, enabled and removed, each change audited."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from audit.models import AuditEntry
from webhooks.models import Endpoint

URL = "http://127.0.0.1:9/hook"
OWN_SECRET = "my-own-signing-secret-8b1e2f"


@pytest.fixture(autouse=True)
def _private_allowed(db: None, settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True


def run(*args: str, stdin: str | None = None, monkeypatch: pytest.MonkeyPatch | None = None) -> str:
    if stdin is not None and monkeypatch is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    out = io.StringIO()
    call_command("webhook", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def everything_recorded() -> str:
    return json.dumps(list(AuditEntry.objects.values("action", "resource", "user", "details")))


def test_add_without_a_secret_generates_one_and_prints_it_once() -> None:
    out = run("add", URL, "--event", "rotation.completed")
    secret = re.search(r"secret \(shown once.*\): (\S+)", out).group(1)  # type: ignore[union-attr]
    endpoint = Endpoint.objects.get()
    assert endpoint.secret == secret and len(secret) >= 40
    assert endpoint.events == ["rotation.completed"]
    assert secret not in run("list") + run("list", "--json")
    assert secret not in everything_recorded()


def test_add_reads_the_secret_from_stdin_and_never_prints_it(monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    out = run("add", URL, "--secret-stdin", stdin=OWN_SECRET + "\n", monkeypatch=monkeypatch)
    assert Endpoint.objects.get().secret == OWN_SECRET
    assert OWN_SECRET not in out + everything_recorded() + caplog.text


def test_add_without_events_subscribes_to_every_event() -> None:
    run("add", URL)
    assert sorted(Endpoint.objects.get().events) == sorted(
        ["rotation.completed", "rotation.failed", "sync.completed", "drift.detected", "job.failed"])


def test_add_is_audited_with_the_url_and_events_of_the_cli_user() -> None:
    run("add", URL, "--event", "drift.detected")
    row = AuditEntry.objects.get(action="add_webhook")
    assert row.success and str(row.user).startswith("cli:")
    assert (row.details["url"], row.details["events"], row.details["webhook"]) == (
        URL, ["drift.detected"], Endpoint.objects.get().pk)


def test_a_short_secret_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CommandError, match="16 to 255"):
        run("add", URL, "--secret-stdin", stdin="short\n", monkeypatch=monkeypatch)
    assert not Endpoint.objects.exists()


def test_a_private_url_is_refused_at_add_time_with_a_failed_audit_row(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(CommandError, match="SERVICE_WEBHOOK_ALLOW_PRIVATE"):
        run("add", "http://169.254.169.254/latest/meta-data")
    assert not Endpoint.objects.exists()
    row = AuditEntry.objects.get(action="add_webhook")
    assert (row.success, row.details["error"]) == (False, "webhook_refused")


def test_the_query_of_a_url_is_not_recorded_in_the_audit_log() -> None:
    run("add", URL + "?token=abc123")
    assert "abc123" not in everything_recorded()


def test_disable_enable_and_remove_change_the_endpoint_and_are_audited() -> None:
    run("add", URL)
    pk = str(Endpoint.objects.get().pk)
    run("disable", pk)
    assert not Endpoint.objects.get().enabled
    assert "disabled" in run("list")
    run("enable", pk)
    assert Endpoint.objects.get().enabled
    run("remove", pk)
    assert not Endpoint.objects.exists()
    actions = list(AuditEntry.objects.filter(resource=f"webhook:{pk}").order_by("id").values_list("action", "success"))
    assert actions == [("disable_webhook", True), ("enable_webhook", True), ("remove_webhook", True)]


def test_an_unknown_id_is_an_error() -> None:
    with pytest.raises(CommandError, match="no webhook with id '42'"):
        run("disable", "42")


def test_deliver_attempts_what_is_due_and_reports_it() -> None:
    assert run("deliver") == "delivered 0, retrying 0, failed 0\n"
    assert AuditEntry.objects.filter(action="deliver_webhooks", success=True).exists()
