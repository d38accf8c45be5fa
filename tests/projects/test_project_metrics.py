"""GET /metrics of many projects: the due, overdue, scheduled and drift gauges carry a ``project``
label; the unprefixed scrape shows every project (a key limited to projects, its own), a project's
path that project's; each project's due check is cached as the default one's is."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from apikeys import keys
from audit.models import AuditEntry
from audit.recorder import record
from projects import registry
from secretsapi import service
from secretsapi.actions import metrics as collector
from tests.factories import Project, definition, file_secret

Samples = dict[str, dict[tuple[tuple[str, str], ...], float]]


def scrape(client: APIClient, path: str = "/metrics") -> Samples:
    response = client.get(path)
    assert response.status_code == 200, response.content
    samples: Samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def by_project(samples: Samples, name: str) -> dict[str, float]:
    """One gauge's values by project (labels other than ``project`` must be absent)."""
    return {dict(labels)["project"]: value for labels, value in samples.get(name, {}).items()}


def monthly(name: str, path: str) -> dict[str, Any]:
    return file_secret(name, path, kind="random_hex", rotation_period="30d")


@pytest.fixture(autouse=True)
def _fresh_due_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collector, "_due_cache", {})


@pytest.fixture
def three(authed_api: APIClient, project: Project, tmp_path: Path) -> dict[str, Project]:
    """default (one secret, fresh), billing (two, one overdue) and shop (one, overdue), each synced."""
    project.write(definition(monthly("db", "out/a.json")))
    made = {"default": project}
    for name, secrets in (("billing", ("stripe", "fresh")), ("shop", ("cart",))):
        root = tmp_path / name
        root.mkdir()
        made[name] = Project(root).write(definition(*(monthly(s, f"out/{s}.json") for s in secrets)))
        registry.add(name, str(made[name].definition), actor="test")
    for name in made:
        prefix = "" if name == "default" else f"/projects/{name}"
        assert authed_api.post(f"{prefix}/sync", {}, format="json").status_code == 200
    made["billing"].backdate("stripe", 45)
    made["shop"].backdate("cart", 45)
    return made


def client(key: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_X_API_KEY=key)
    return api


def test_the_unprefixed_scrape_shows_every_projects_due_and_overdue_labelled(
    authed_api: APIClient, three: dict[str, Project]
) -> None:
    samples = scrape(authed_api)
    assert by_project(samples, "secretsapi_secrets_overdue") == {"default": 0, "billing": 1, "shop": 1}
    assert by_project(samples, "secretsapi_secrets_due") == {"default": 0, "billing": 0, "shop": 0}
    assert by_project(samples, "secretsapi_rotation_check_ok") == {"default": 1, "billing": 1, "shop": 1}


def test_one_projects_invalid_definition_is_its_own_zero_check(authed_api: APIClient,
                                                               three: dict[str, Project]) -> None:
    three["shop"].write("secrets: [unclosed\n")
    samples = scrape(authed_api)
    assert by_project(samples, "secretsapi_rotation_check_ok") == {"default": 1, "billing": 1, "shop": 0}
    assert by_project(samples, "secretsapi_secrets_overdue") == {"default": 0, "billing": 1}


def test_a_projects_path_shows_that_project_labelled(authed_api: APIClient, three: dict[str, Project]) -> None:
    samples = scrape(authed_api, "/projects/billing/metrics")
    assert by_project(samples, "secretsapi_secrets_overdue") == {"billing": 1}
    assert {dict(labels)["project"] for labels in samples["secretsapi_operations_total"]} == {"billing"}


def test_a_key_limited_to_projects_sees_only_theirs(authed_api: APIClient, three: dict[str, Project],
                                                    api_key: str) -> None:
    limited = client(keys.create("prom-two", ["metrics"], projects={"default": (), "billing": ()}).key)
    samples = scrape(limited)
    assert by_project(samples, "secretsapi_secrets_overdue") == {"default": 0, "billing": 1}
    assert {dict(labels)["project"] for labels in samples["secretsapi_operations_total"]} == {"default", "billing"}
    everyone = scrape(authed_api)
    assert {dict(labels)["project"] for labels in everyone["secretsapi_operations_total"]} == {
        "default", "billing", "shop"}


def test_drift_gauges_are_each_projects_last_full_check(authed_api: APIClient, three: dict[str, Project]) -> None:
    (three["billing"].root / "out/stripe.json").write_text('{"stripe": "edited-by-hand"}')
    authed_api.post("/drift/check", {}, format="json")
    authed_api.post("/projects/billing/drift/check", {}, format="json")
    drifted = scrape(authed_api)["secretsapi_secrets_drifted"]
    assert drifted == {(("environment", ""), ("project", "default")): 0,
                       (("environment", ""), ("project", "billing")): 1}
    assert set(scrape(authed_api, "/projects/billing/metrics")["secretsapi_secrets_drifted"]) == {
        (("environment", ""), ("project", "billing"))}


def test_scheduled_run_ages_are_each_projects(authed_api: APIClient, three: dict[str, Project]) -> None:
    then = timezone.now() - timedelta(hours=2)
    for project in ("default", "billing"):
        row = record(action="execute_rotation", resource="secrets", user="scheduler", success=True,
                     context={"project": project})
        AuditEntry.objects.filter(pk=row).update(timestamp=then if project == "default" else timezone.now())
    record(action="execute_rotation", resource="secrets", user="scheduler", success=False, context={"project": "shop"})
    ages = by_project(scrape(authed_api), "secretsapi_last_scheduled_rotation_age_seconds")
    assert set(ages) == {"default", "billing"}
    assert ages["default"] == pytest.approx(7200, abs=60)
    assert ages["billing"] < 60


def test_each_projects_due_check_is_run_once_a_minute_however_often_it_is_scraped(
    authed_api: APIClient, three: dict[str, Project], monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[Path] = []
    real = service.check_rotation

    def counting(ws: Any, *args: Any, **kwargs: Any) -> Any:
        checked.append(ws.definition_path)
        return real(ws, *args, **kwargs)

    monkeypatch.setattr(service, "check_rotation", counting)
    for _ in range(3):
        scrape(authed_api)
    assert sorted(map(str, checked)) == sorted(str(p.definition) for p in three.values())


def test_a_scrape_past_its_time_for_due_checks_shows_the_rest_as_last_checked(
    authed_api: APIClient, three: dict[str, Project], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collector, "DUE_SCRAPE_SECONDS", 0.0)  # each scrape checks one project only
    seen = [set(by_project(scrape(authed_api), "secretsapi_rotation_check_ok")) for _ in range(3)]
    assert seen == [{"default"}, {"default", "billing"}, {"default", "billing", "shop"}]
    samples = scrape(authed_api)
    assert by_project(samples, "secretsapi_secrets_overdue") == {"default": 0, "billing": 1, "shop": 1}
    assert set(by_project(samples, "secretsapi_rotation_check_timestamp_seconds")) == {"default", "billing", "shop"}


def test_the_oldest_figures_are_checked_again_first(
    authed_api: APIClient, three: dict[str, Project], monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    scrape(authed_api)  # every project checked
    before = by_project(scrape(authed_api), "secretsapi_rotation_check_timestamp_seconds")
    monkeypatch.setattr(collector, "DUE_SCRAPE_SECONDS", 0.0)
    later = time.monotonic() + collector.DUE_MAX_AGE + 1
    monkeypatch.setattr(time, "monotonic", lambda: later)
    three["default"].backdate("db", 45)
    after = scrape(authed_api)
    assert by_project(after, "secretsapi_secrets_overdue") == {"default": 1, "billing": 1, "shop": 1}
    stamps = by_project(after, "secretsapi_rotation_check_timestamp_seconds")
    assert stamps["default"] >= before["default"] and stamps["billing"] == before["billing"]


def test_a_scrape_with_every_figure_fresh_reads_no_definition(
    authed_api: APIClient, three: dict[str, Project], monkeypatch: pytest.MonkeyPatch
) -> None:
    from secretsapi.service.loading import loader

    scrape(authed_api)
    loaded: list[Path] = []
    real = loader.load_definition

    def counting(path: Path, *args: Any, **kwargs: Any) -> Any:
        loaded.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr("secretsapi.service.workspace.load_definition", counting)
    scrape(authed_api)
    assert loaded == []
