"""Every endpoint under /projects/{project}/, on that project's definition; the spec's paths the default's."""

from __future__ import annotations

from pathlib import Path

from rest_framework.test import APIClient

from audit.models import AuditEntry
from projects import registry
from tests.factories import Project
from tests.projects.conftest import names


def test_a_projects_secrets_are_its_own_definitions(authed_api: APIClient, billing: Project) -> None:
    assert names(authed_api.get("/projects/billing/secrets")) == ["stripe_key"]


def test_the_spec_paths_serve_the_default_project(authed_api: APIClient, billing: Project) -> None:
    assert names(authed_api.get("/secrets")) == ["db_password"]
    assert names(authed_api.get("/projects/default/secrets")) == ["db_password"]


def test_an_unknown_project_is_404_in_the_error_body(authed_api: APIClient, billing: Project) -> None:
    answer = authed_api.get("/projects/nosuch/secrets")
    assert answer.status_code == 404
    assert set(answer.json()) == {"error", "detail", "timestamp"}
    assert answer.json()["error"] == "Not found"


def test_a_sync_in_a_project_writes_its_lockfile_only(authed_api: APIClient, billing: Project,
                                                      project: Project) -> None:
    answer = authed_api.post("/projects/billing/sync", {}, format="json")
    assert answer.status_code == 200, answer.json()
    assert answer.json()["secrets_generated"] == ["stripe_key"]
    assert billing.lockfile.exists() and not project.lockfile.exists()


def test_an_operations_audit_row_names_its_project(authed_api: APIClient, billing: Project) -> None:
    authed_api.post("/projects/billing/sync", {}, format="json")
    row = AuditEntry.objects.get(action="sync")
    assert (row.project, row.definition) == ("billing", str(billing.definition))


def test_the_default_projects_rows_say_default(authed_api: APIClient, billing: Project) -> None:
    authed_api.get("/secrets")
    assert AuditEntry.objects.get(action="list_secrets").project == "default"


def test_the_audit_log_under_a_project_lists_its_rows_only(authed_api: APIClient, billing: Project) -> None:
    authed_api.get("/secrets")
    authed_api.get("/projects/billing/secrets")
    entries = authed_api.get("/projects/billing/audit/logs?action=list_secrets").json()["entries"]
    assert [e["project"] for e in entries] == ["billing"]


def test_the_audit_project_filter_picks_one_projects_rows(authed_api: APIClient, billing: Project) -> None:
    authed_api.get("/secrets")
    authed_api.get("/projects/billing/secrets")
    entries = authed_api.get("/audit/logs?action=list_secrets&project=default").json()["entries"]
    assert [e["project"] for e in entries] == ["default"]


def test_a_project_added_is_served_without_a_restart(authed_api: APIClient, billing: Project,
                                                     tmp_path: Path) -> None:
    assert authed_api.get("/projects/late/secrets").status_code == 404
    root = tmp_path / "late"
    root.mkdir()
    late = Project(root).write({"version": "1.0", "secrets": []})
    registry.add("late", str(late.definition), actor="test")
    assert authed_api.get("/projects/late/secrets").status_code == 200


def test_an_invalid_definition_in_one_project_leaves_the_other_working(authed_api: APIClient,
                                                                      billing: Project) -> None:
    billing.write("secrets: [unclosed")
    assert authed_api.get("/projects/billing/secrets").status_code == 422
    assert names(authed_api.get("/secrets")) == ["db_password"]
    assert authed_api.post("/sync", {}, format="json").status_code == 200


def test_a_scheduled_tick_runs_each_project_as_its_own_job(authed_api: APIClient, billing: Project) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from jobs import queue, schedules
    from jobs.models import Schedule
    from secretsapi import operations

    billing.write("secrets: [unclosed")  # its job fails; the default one's still runs
    schedules.install()
    Schedule.objects.filter(name="drift").update(last_tick=timezone.now() - timedelta(days=2))
    assert schedules.due(operations.enqueue) == ["drift"]
    jobs = queue.page(owner=None, everyone=True, operations=["check_drift"], limit=10, offset=0)
    outcome = {job.project: job.state for job in jobs if job.actor == "scheduler"}
    assert outcome == {"default": "succeeded", "billing": "failed"}



def test_operation_counts_are_labelled_with_their_project(authed_api: APIClient, billing: Project) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    authed_api.post("/sync", {}, format="json")
    authed_api.post("/projects/billing/sync", {}, format="json")
    authed_api.post("/projects/billing/sync", {}, format="json")
    families = {f.name: f for f in text_string_to_metric_families(authed_api.get("/metrics").content.decode())}
    counts = {s.labels["project"]: s.value for s in families["secretsapi_operations"].samples
              if s.labels["operation"] == "sync"}
    assert counts == {"default": 1, "billing": 2}


def test_a_sent_definitions_check_is_a_row_of_the_project_it_ran_in(authed_api: APIClient, billing: Project) -> None:
    sent = {"config": {"version": "1.0", "secrets": [], "metadata": {"project": "shop"}}}
    authed_api.post("/config/validate", sent, format="json")
    authed_api.post("/projects/billing/config/validate", sent, format="json")
    rows = AuditEntry.objects.filter(action="validate_config").order_by("id")
    assert [(row.project, row.definition_project) for row in rows] == [("default", "shop"), ("billing", "shop")]
