"""GET /metrics: Prometheus' text format, computed from the database, parsed with prometheus_client's parser."""

from __future__ import annotations

import bisect
import json
import os
import re
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from audit.models import AuditEntry
from audit.recorder import record
from metrics import tally
from metrics.models import DriftCheck, OperationTally, ScrapeTally
from metrics.tally import BUCKETS
from secretsapi.actions import metrics as collector
from tests.factories import Project, definition, env_secret, environments, file_secret, named_key
from tests.webhooks.support import endpoint
from webhooks import outbox
from webhooks.models import Attempt, Delivery


def scrape(client: APIClient) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """sample name -> labels -> value."""
    response = client.get("/metrics")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return samples


# The default project's label: every per-project figure carries one.
DEFAULT = (("project", "default"),)


def monthly(name: str) -> dict[str, Any]:
    return file_secret(name, "out/a.json", kind="random_hex", rotation_period="30d")


@pytest.fixture(autouse=True)
def _fresh_due_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collector, "_due_cache", {})


def test_operations_are_counted_by_kind_and_outcome(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    authed_api.post("/sync", {}, format="json")
    authed_api.post("/sync", {"secret_name": "missing"}, format="json")
    authed_api.post("/drift/check", {}, format="json")
    samples = scrape(authed_api)["secretsapi_operations_total"]
    assert samples[(("operation", "sync"), ("outcome", "succeeded"), ("project", "default"))] == 2
    assert samples[(("operation", "sync"), ("outcome", "failed"), ("project", "default"))] == 1
    assert samples[(("operation", "check_drift"), ("outcome", "succeeded"), ("project", "default"))] == 1


def test_a_drift_check_that_found_drift_is_counted_as_drift(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    authed_api.post("/drift/check", {}, format="json")
    (project.root / "out/a.json").write_text('{"db": "edited-by-hand"}')
    authed_api.post("/drift/check", {}, format="json")
    authed_api.post("/drift/check", {}, format="json")
    samples = scrape(authed_api)
    totals = samples["secretsapi_operations_total"]
    assert totals[(("operation", "check_drift"), ("outcome", "succeeded"), ("project", "default"))] == 1
    assert totals[(("operation", "check_drift"), ("outcome", "drift"), ("project", "default"))] == 2
    assert samples["secretsapi_operation_duration_seconds_count"][
        (("operation", "check_drift"), ("outcome", "drift"), ("project", "default"))] == 2


def test_an_operation_begun_in_the_last_day_and_never_ended_is_unfinished(authed_api: APIClient,
                                                                          project: Project) -> None:
    record(action="execute_rotation", resource="secrets", user="t", success=False, details={"state": "started"})
    old = record(action="sync", resource="secrets", user="t", success=False, details={"state": "started"})
    AuditEntry.objects.filter(pk=old).update(timestamp=timezone.now() - timedelta(days=2))
    samples = scrape(authed_api)
    assert samples["secretsapi_operations_unfinished"] == {(("operation", "execute_rotation"), *DEFAULT): 1}
    assert "secretsapi_operations_total" not in samples


def test_durations_are_a_histogram_of_the_tallies(authed_api: APIClient, project: Project) -> None:
    for seconds in (0.02, 0.3, 7.0):
        tally.add("sync", True, seconds)
    samples = scrape(authed_api)
    labels = (("operation", "sync"), ("outcome", "succeeded"), ("project", "default"))
    buckets = samples["secretsapi_operation_duration_seconds_bucket"]
    assert buckets[(("le", "0.05"), *labels)] == 1
    assert buckets[(("le", "0.5"), *labels)] == 2
    assert buckets[(("le", "10.0"), *labels)] == 3
    assert buckets[(("le", "+Inf"), *labels)] == 3
    assert samples["secretsapi_operation_duration_seconds_count"][labels] == 3
    assert samples["secretsapi_operation_duration_seconds_sum"][labels] == pytest.approx(7.32)


def test_every_operation_row_records_its_duration_and_is_tallied_with_it(authed_api: APIClient,
                                                                         project: Project) -> None:
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    seconds = AuditEntry.objects.get(action="sync").details["duration_seconds"]
    row = OperationTally.objects.get()
    assert (row.action, row.success, row.count, row.seconds) == ("sync", True, 1, seconds)
    assert row.bucket == bisect.bisect_left(BUCKETS, seconds)


def test_a_tally_row_adds_up_every_operation_in_its_bucket(db: None) -> None:
    tally.add("check_drift", False, 0.2)
    tally.add("check_drift", False, 0.21)
    tally.add("check_drift", True, 0.2)
    row = OperationTally.objects.get(action="check_drift", success=False)
    assert row.count == 2
    assert row.seconds == pytest.approx(0.41)
    assert OperationTally.objects.count() == 2


def test_an_operation_whose_row_is_not_completed_is_not_tallied(authed_api: APIClient, project: Project,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from audit import listeners
    from secretsapi.actions import workspaces, writes

    project.write(definition(monthly("db")))

    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the audit database refused the row")

    monkeypatch.setattr(listeners, "finish", refuse)
    with pytest.raises(RuntimeError):
        writes.sync(workspaces.workspace(), actor="t")
    assert not OperationTally.objects.exists()


def test_secrets_due_and_overdue_are_counted(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db"), monthly("api"), monthly("fresh")))
    authed_api.post("/sync", {}, format="json")
    project.backdate("db", 45)
    project.backdate("api", 28)  # inside the 3-day warning window of a 30-day period
    samples = scrape(authed_api)
    assert samples["secretsapi_rotation_check_ok"][DEFAULT] == 1
    assert samples["secretsapi_secrets_overdue"][DEFAULT] == 1
    assert samples["secretsapi_secrets_due"][DEFAULT] == 1


def test_an_unreadable_definition_is_a_zero_check_gauge_without_due_figures(authed_api: APIClient,
                                                                            project: Project) -> None:
    project.definition.write_text("secrets: [unclosed\n")
    samples = scrape(authed_api)
    assert samples["secretsapi_rotation_check_ok"][DEFAULT] == 0
    assert "secretsapi_secrets_due" not in samples


def test_secrets_due_are_checked_again_once_the_cached_figures_are_a_minute_old(
        authed_api: APIClient, project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    assert scrape(authed_api)["secretsapi_secrets_overdue"][DEFAULT] == 0
    project.backdate("db", 45)
    assert scrape(authed_api)["secretsapi_secrets_overdue"][DEFAULT] == 0  # within the minute: the same figures
    clock = time.monotonic() + collector.DUE_MAX_AGE + 1
    monkeypatch.setattr(time, "monotonic", lambda: clock)
    assert scrape(authed_api)["secretsapi_secrets_overdue"][DEFAULT] == 1


def test_seconds_since_the_last_successful_scheduled_runs(authed_api: APIClient, project: Project) -> None:
    assert "secretsapi_last_scheduled_rotation_age_seconds" not in scrape(authed_api)
    then = timezone.now() - timedelta(hours=2)
    for action in ("execute_rotation", "check_drift"):
        row = record(action=action, resource="secrets", user="scheduler", success=True)
        AuditEntry.objects.filter(pk=row).update(timestamp=then)
    record(action="execute_rotation", resource="secrets", user="scheduler", success=False)
    record(action="execute_rotation", resource="secrets", user="cli:alice", success=True)
    samples = scrape(authed_api)
    assert samples["secretsapi_last_scheduled_rotation_age_seconds"][DEFAULT] == pytest.approx(7200, abs=60)
    assert samples["secretsapi_last_scheduled_drift_check_age_seconds"][DEFAULT] == pytest.approx(7200, abs=60)


def test_webhook_deliveries_are_counted_by_state_and_attempts_by_outcome(authed_api: APIClient, project: Project,
                                                                         settings: Any) -> None:
    endpoint("http://127.0.0.1:9/")
    outbox.enqueue([("sync.completed", {}), ("drift.detected", {})], actor="t", audit_row=1)
    first, second = Delivery.objects.order_by("id")
    Delivery.objects.filter(pk=first.pk).update(state="delivered")
    Attempt.objects.create(delivery=first, at=timezone.now(), status=500)
    Attempt.objects.create(delivery=first, at=timezone.now(), status=200)
    Attempt.objects.create(delivery=second, at=timezone.now(), error="no answer: ConnectTimeout")
    samples = scrape(authed_api)
    assert samples["secretsapi_webhook_deliveries"] == {
        (("state", "pending"),): 1, (("state", "delivered"),): 1, (("state", "failed"),): 0}
    assert samples["secretsapi_webhook_attempts_total"] == {(("outcome", "succeeded"),): 1,
                                                           (("outcome", "failed"),): 2}


def test_no_secret_name_value_or_hash_is_in_the_exposition(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db_password")))
    authed_api.post("/sync", {}, format="json")
    project.backdate("db_password", 45)
    authed_api.post("/rotation/execute", {}, format="json")
    text = authed_api.get("/metrics").content.decode()
    values = set(json.loads((project.root / "out/a.json").read_text()).values())
    hashes = set(re.findall(r"[0-9a-f]{64}", project.lockfile.read_text()))
    assert values and hashes
    for secret in values | hashes | {"db_password"}:
        assert secret not in text


def test_a_key_needs_the_metrics_scope(db: None, project: Project) -> None:
    for scopes, status in ((("metrics",), 200), (("read", "write", "audit"), 403)):
        client = APIClient()
        client.credentials(HTTP_X_API_KEY=named_key("-".join(scopes), *scopes))
        assert client.get("/metrics").status_code == status


def test_without_a_key_it_is_401_with_the_error_body_whatever_the_scraper_accepts(api: APIClient) -> None:
    response = api.get("/metrics", HTTP_ACCEPT="application/openmetrics-text; version=1.0.0, text/plain;q=0.5")
    assert response.status_code == 401
    assert set(response.json()) == {"error", "detail", "timestamp"}
    assert response["WWW-Authenticate"]


def test_with_metrics_public_it_answers_without_a_key(api: APIClient, project: Project, settings: Any) -> None:
    settings.SERVICE_METRICS_PUBLIC = True
    assert "secretsapi_webhook_deliveries" in scrape(api)
    assert ScrapeTally.objects.get().key == ""


def test_with_metrics_public_a_bearer_key_is_still_checked_and_named(api: APIClient, project: Project,
                                                                     settings: Any) -> None:
    settings.SERVICE_METRICS_PUBLIC = True
    assert api.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong-key-0123456789").status_code == 401
    assert api.get("/metrics", HTTP_AUTHORIZATION="Bearer").status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {named_key('prom', 'metrics')}")
    scrape(api)
    assert ScrapeTally.objects.get().key == "prom"


def test_a_query_parameter_is_refused(authed_api: APIClient) -> None:
    assert authed_api.get("/metrics?debug=1").status_code == 422


def test_scrapes_are_counted_by_key_and_outcome_and_write_no_audit_row(authed_api: APIClient, api: APIClient,
                                                                       project: Project) -> None:
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {named_key('prom', 'metrics')}")
    for _ in range(3):
        scrape(authed_api)
    scrape(api)
    # Each scrape is counted once it is answered: the fourth of the service's sees three.
    samples = scrape(authed_api)["secretsapi_scrapes_total"]
    assert samples == {(("key", "service"), ("outcome", "succeeded")): 3,
                       (("key", "prom"), ("outcome", "succeeded")): 1}
    assert list(AuditEntry.objects.values_list("action", flat=True)) == ["apikey_create"]


def test_a_failed_scrape_is_counted_as_failed(authed_api: APIClient, project: Project,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> Any:
        raise RuntimeError("the jobs table is gone")

    with monkeypatch.context() as patch:
        patch.setattr(collector, "_jobs", broken)
        assert authed_api.get("/metrics").status_code == 500
    samples = scrape(authed_api)["secretsapi_scrapes_total"]
    assert samples == {(("key", "service"), ("outcome", "failed")): 1}


def test_help_texts_say_lengths_of_time_in_words(authed_api: APIClient, project: Project) -> None:
    text = authed_api.get("/metrics").content.decode()
    helps = [line for line in text.splitlines() if line.startswith("# HELP ")]
    assert helps
    assert not [line for line in helps if re.search(r"\d:\d\d", line)]
    assert "# HELP secretsapi_operations_unfinished Operations begun in the last day and not ended" in text


@pytest.mark.parametrize(("seconds", "words"), [
    (86400, "day"), (7200, "2 hours"), (5400, "1 hour and 30 minutes"), (90061, "1 day and 1 hour and 1 minute "
                                                                         "and 1 second"), (0, "0 seconds")])
def test_a_length_of_time_is_spoken_in_units(seconds: int, words: str) -> None:
    assert collector.spoken(timedelta(seconds=seconds)) == words


DRIFT_GAUGES = ("secretsapi_secrets_drifted", "secretsapi_secrets_drift_unreadable",
                "secretsapi_last_drift_check_timestamp_seconds")


def drift_gauges(client: APIClient) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    samples = scrape(client)
    return {name: samples.get(name, {}) for name in DRIFT_GAUGES}


DEFAULT_LANE = (("environment", ""), ("project", "default"))


def test_the_drift_gauges_are_absent_until_a_drift_check_ran(authed_api: APIClient, project: Project) -> None:
    project.write(definition(monthly("db")))
    authed_api.post("/sync", {}, format="json")
    assert drift_gauges(authed_api) == {"secretsapi_secrets_drifted": {}, "secretsapi_secrets_drift_unreadable": {},
                                        "secretsapi_last_drift_check_timestamp_seconds": {}}


def test_drifted_secrets_are_what_the_last_full_drift_check_found(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", "out/a.json", kind="random_hex"),
                             file_secret("api", "out/b.json", kind="random_hex"),
                             file_secret("web", "out/c.json", kind="random_hex")))
    authed_api.post("/sync", {}, format="json")
    before = time.time()
    authed_api.post("/drift/check", {}, format="json")
    gauges = drift_gauges(authed_api)
    assert gauges["secretsapi_secrets_drifted"] == {DEFAULT_LANE: 0}
    assert gauges["secretsapi_last_drift_check_timestamp_seconds"][DEFAULT_LANE] >= before - 1
    for name in ("out/a.json", "out/b.json"):
        (project.root / name).write_text('{"edited": "by hand"}')
    assert drift_gauges(authed_api)["secretsapi_secrets_drifted"] == {DEFAULT_LANE: 0}  # not checked since
    authed_api.post("/drift/check", {}, format="json")
    assert drift_gauges(authed_api)["secretsapi_secrets_drifted"] == {DEFAULT_LANE: 2}
    # A check of one secret says nothing of the others: the gauge stays the full check's.
    authed_api.post("/drift/check", {"secret_name": "web"}, format="json")
    assert drift_gauges(authed_api)["secretsapi_secrets_drifted"] == {DEFAULT_LANE: 2}


def test_a_target_the_check_could_not_read_is_counted_as_unreadable(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", "out/a.json", kind="random_hex")))
    authed_api.post("/sync", {}, format="json")
    target = project.root / "out/a.json"
    target.unlink()
    target.mkdir()  # a folder where the file was: there, but not readable as one
    authed_api.post("/drift/check", {}, format="json")
    gauges = drift_gauges(authed_api)
    assert gauges["secretsapi_secrets_drifted"] == {DEFAULT_LANE: 1}
    assert gauges["secretsapi_secrets_drift_unreadable"] == {DEFAULT_LANE: 1}


def test_each_environment_keeps_its_own_last_drift_check(authed_api: APIClient, project: Project) -> None:
    environments(project, env_secret("db"))
    authed_api.post("/sync", {}, format="json")
    authed_api.post("/sync", {"environment": "declared"}, format="json")
    (project.root / "out/prod.env").write_text("db=edited-by-hand\n")
    authed_api.post("/drift/check", {"environment": "declared"}, format="json")
    authed_api.post("/drift/check", {}, format="json")
    drifted = drift_gauges(authed_api)["secretsapi_secrets_drifted"]
    assert drifted == {DEFAULT_LANE: 0, (("environment", "declared"), ("project", "default")): 1}


def test_a_full_drift_checks_findings_commit_with_its_audit_row_or_neither_does(
        db: None, project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from secretsapi.actions import checks, workspaces

    project.write(definition(file_secret("db", "out/a.json", kind="random_hex")))

    def refuse(**figures: Any) -> None:
        raise RuntimeError("the drift gauges' table refused the row")

    monkeypatch.setattr(tally, "drift_checked", refuse)
    with pytest.raises(RuntimeError):
        checks.check_drift(workspaces.workspace(), actor="cli:alice")
    assert not AuditEntry.objects.filter(action="check_drift").exists()
    monkeypatch.undo()
    checks.check_drift(workspaces.workspace(), actor="cli:alice")
    assert AuditEntry.objects.filter(action="check_drift").count() == DriftCheck.objects.count() == 1


def test_a_check_of_another_definition_is_not_the_served_ones(authed_api: APIClient, project: Project) -> None:
    from secretsapi.actions import checks, workspaces

    project.write(definition(file_secret("db", "out/a.json", kind="random_hex")))
    other = project.root / "other" / "Secretfile.yml"
    other.parent.mkdir()
    other.write_text(project.definition.read_text())
    ws = workspaces.workspace(definition=other, lockfile=other.parent / ".gitsecrets.lock", command_line=True)
    checks.check_drift(ws, actor="cli:alice")
    assert drift_gauges(authed_api)["secretsapi_secrets_drifted"] == {}


def test_an_older_check_ending_last_does_not_replace_a_newer_ones_findings(db: None) -> None:
    now = timezone.now()
    tally.drift_checked(definition="/p/Secretfile.yml", environment=None, at=now, drifted=3, unreadable=0)
    tally.drift_checked(definition="/p/Secretfile.yml", environment=None, at=now - timedelta(seconds=5), drifted=0,
                        unreadable=0)
    assert DriftCheck.objects.get().drifted == 3


def test_with_metrics_public_a_wrong_key_is_still_refused(api: APIClient, project: Project, settings: Any) -> None:
    settings.SERVICE_METRICS_PUBLIC = True
    assert api.get("/metrics", HTTP_X_API_KEY="wrong-key-0123456789").status_code == 401


@pytest.mark.slow
def test_a_web_worker_loads_prometheus_client_at_the_first_scrape_not_with_the_urls() -> None:
    code = ("import sys, django; django.setup()\n"
            "from django.urls import resolve; resolve('/health'); resolve('/metrics')\n"
            "print('prometheus_client' in sys.modules)\n")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "project.settings", "DATABASE_URL": "sqlite:///:memory:"}
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], env=env,
                         capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "False"
