"""A key limited to projects: any other project is 404, exactly as one that does not exist."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from apikeys import keys
from apikeys.models import ApiKey
from tests.factories import Project, definition, file_secret

ALL = ("read", "write", "audit", "webhooks", "metrics")
# One path per endpoint family, with its method.
FAMILIES = [
    ("get", "/secrets"), ("get", "/secrets/stripe_key/status"), ("post", "/sync"), ("post", "/rotation/check"),
    ("post", "/rotation/execute"), ("post", "/policy/check"), ("post", "/drift/check"), ("post", "/agent/sync"),
    ("post", "/config/render"), ("get", "/generators"), ("get", "/providers"), ("get", "/audit/logs"),
    ("get", "/jobs"), ("get", "/webhooks"), ("get", "/metrics"),
]


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key)
    return client


def _call(client: APIClient, method: str, path: str) -> tuple[int, dict[str, str]]:
    answer = getattr(client, method)(path, {}, format="json") if method == "post" else client.get(path)
    body = answer.json()
    return answer.status_code, {k: v for k, v in body.items() if k != "timestamp"}


@pytest.fixture
def billing_only(billing: Project, api_key: str) -> APIClient:
    return _client(keys.create("ci-billing", list(ALL), projects={"billing": ()}).key)


@pytest.mark.parametrize(("method", "path"), FAMILIES)
def test_a_key_limited_to_one_project_gets_404_on_anothers_endpoints(
    billing_only: APIClient, method: str, path: str
) -> None:
    status, body = _call(billing_only, method, path)
    assert status == 404, body
    assert body == {"error": "Not found", "detail": "No project named 'default' (project_not_found)."}


@pytest.mark.parametrize(("method", "path"), FAMILIES)
def test_a_forbidden_project_answers_as_one_that_does_not_exist(
    billing_only: APIClient, method: str, path: str, tmp_path: Path
) -> None:
    from projects import registry

    root = tmp_path / "other"
    root.mkdir()
    registry.add("other", str(Project(root).write({"version": "1.0", "secrets": []}).definition), actor="t")
    forbidden = _call(billing_only, method, f"/projects/other{path}")
    missing = _call(billing_only, method, f"/projects/nosuch{path}")
    assert forbidden[0] == missing[0] == 404
    assert forbidden[1]["detail"].replace("other", "X") == missing[1]["detail"].replace("nosuch", "X")


def test_a_limited_key_works_in_its_project(billing_only: APIClient) -> None:
    assert billing_only.get("/projects/billing/secrets").status_code == 200


def test_a_key_without_a_limit_reaches_every_project(billing: Project, api_key: str) -> None:
    client = _client(keys.create("ci-all", ["read"]).key)
    assert client.get("/secrets").status_code == 200
    assert client.get("/projects/billing/secrets").status_code == 200


def test_a_key_limited_to_an_environment_is_refused_another(billing: Project, api_key: str) -> None:
    billing.write({"version": "1.0", "secrets": [], "environments": {
        "default": "staging", "profiles": {"staging": {}, "production": {}}}})
    client = _client(keys.create("ci-staging", ["read"], projects={"billing": ("staging",)}).key)
    assert client.get("/projects/billing/secrets?environment=staging").status_code == 200
    assert client.get("/projects/billing/secrets").status_code == 200  # the default lane: staging
    refused = client.get("/projects/billing/secrets?environment=production")
    assert refused.status_code == 404
    assert "production" in refused.json()["detail"] and "staging" not in refused.json()["detail"]


def test_a_key_limited_to_an_environment_naming_none_of_a_definition_without_a_default_is_told_to(
    billing: Project, api_key: str
) -> None:
    billing.write({"version": "1.0", "secrets": []})
    client = _client(keys.create("ci-staging", ["read"], projects={"billing": ("staging",)}).key)
    refused = client.get("/projects/billing/secrets")
    assert refused.status_code == 404
    assert refused.json()["detail"] == ("No environment named, and the definition has no default one this key "
                                        "may use: name one (environment_not_found).")


def test_a_job_of_a_key_limited_to_an_environment_runs_in_it_only(billing: Project, api_key: str) -> None:
    billing.write({"version": "1.0", "secrets": [], "environments": {
        "default": "staging", "profiles": {"staging": {}, "production": {}}}})
    client = _client(keys.create("ci-staging", ["write"], projects={"billing": ("staging",)}).key)
    assert client.post("/projects/billing/sync", {"environment": "staging"}, format="json").status_code == 200
    refused = client.post("/projects/billing/sync", {"environment": "production"}, format="json")
    assert refused.status_code == 404, refused.json()


def test_allowed_projects_names_a_keys_projects(db: None) -> None:
    keys.create("a", ["read"], projects=keys.parse_projects(["billing", "shop:production"]))
    keys.create("b", ["read"])
    assert keys.allowed_projects("a") == ["billing", "shop"]
    assert keys.allowed_projects("b") is None
    assert ApiKey.objects.get(name="a").projects == {"billing": [], "shop": ["production"]}


def test_a_limited_keys_job_list_shows_its_projects_jobs_only(billing: Project, authed_api: APIClient) -> None:
    authed_api.post("/sync", {"async": True}, format="json")
    client = _client(keys.create("ci-b", ["write"], projects={"billing": ()}).key)
    client.post("/projects/billing/sync", {"async": True}, format="json")
    admin = _client(keys.create("boss", ["write", "admin"], projects={"billing": ()}).key)
    jobs = admin.get("/projects/billing/jobs").json()["jobs"]
    assert [job["project"] for job in jobs] == ["billing"]


@pytest.mark.parametrize("path", ["/", "/health"])
def test_the_probes_answer_a_key_limited_to_other_projects(billing_only: APIClient, path: str) -> None:
    assert billing_only.get(path).status_code == 200


def test_whoami_names_the_projects_a_limited_key_may_touch(billing_only: APIClient) -> None:
    answer = billing_only.get("/whoami")
    assert (answer.status_code, answer.json()["projects"]) == (200, ["billing"])



def _last_row(action: str) -> dict[str, Any]:
    from audit.models import AuditEntry

    row = AuditEntry.objects.filter(action=action).order_by("-id").first()
    assert row is not None
    return {"user": row.user, "project": row.project, "resource": row.resource}


def test_a_key_refused_a_project_it_may_not_touch_is_a_row_of_that_project(billing_only: APIClient) -> None:
    assert billing_only.get("/secrets").status_code == 404
    assert _last_row("request_refused") == {"user": "ci-billing", "project": "default", "resource": "/secrets"}


def test_a_refusal_in_a_project_that_does_not_exist_names_no_project(billing_only: APIClient) -> None:
    assert billing_only.get("/projects/nosuch/secrets").status_code == 404
    assert _last_row("request_refused")["project"] == ""


def test_a_refused_query_in_a_project_is_a_row_of_that_project(billing_only: APIClient) -> None:
    assert billing_only.get("/projects/billing/secrets?nope=1").status_code == 422
    assert _last_row("request_refused")["project"] == "billing"


def test_whoami_of_a_key_confined_to_one_project_is_a_row_of_that_project(billing_only: APIClient) -> None:
    assert billing_only.get("/whoami").status_code == 200
    assert _last_row("whoami")["project"] == "billing"


def test_whoami_of_a_key_of_every_project_names_none(billing: Project, api_key: str) -> None:
    assert _client(keys.create("ci-all", ["read"]).key).get("/whoami").status_code == 200
    assert _last_row("whoami")["project"] == ""


def _tallies() -> list[tuple[str, str]]:
    from audit.models import AuditEntry

    return sorted(AuditEntry.objects.filter(action="authenticate").values_list("project", "details__path"))


def test_a_wrong_key_on_a_projects_path_is_counted_in_that_projects_rows(billing: Project, api_key: str) -> None:
    assert _client("sk_wrong_key").get("/projects/billing/secrets").status_code == 401
    assert _tallies() == [("billing", "/projects/billing/secrets")]


def test_wrong_keys_in_one_minute_are_a_row_per_project_asked(billing: Project, api_key: str) -> None:
    wrong = _client("sk_wrong_key")
    for path in ("/projects/billing/secrets", "/secrets", "/projects/billing/sync", "/projects/nosuch/secrets"):
        assert wrong.get(path).status_code == 401
    # The unprefixed path is the default project's; a name that is no project is written nowhere.
    assert _tallies() == [("", "/projects/nosuch/secrets"), ("billing", "/projects/billing/secrets"),
                          ("default", "/secrets")]


def test_a_key_confined_to_one_project_is_created_and_revoked_in_that_projects_rows(billing: Project) -> None:
    keys.create("ci-billing", ["read"], projects={"billing": ()}, actor="ops")
    keys.revoke("ci-billing", actor="ops")
    assert [_last_row(action)["project"] for action in ("apikey_create", "apikey_revoke")] == ["billing", "billing"]


def test_a_key_of_several_projects_is_created_in_no_projects_rows(billing: Project) -> None:
    keys.create("ci-two", ["read"], projects={"billing": (), "default": ()}, actor="ops")
    assert _last_row("apikey_create")["project"] == ""


def test_a_tally_of_the_longest_client_and_project_names_keeps_its_key_within_the_column(
    db: None, tmp_path: Path, api_key: str
) -> None:
    from audit.models import AuditEntry
    from projects import registry

    name = "p" * 63  # the longest project name
    (tmp_path / name).mkdir()
    registry.add(name, str(Project(tmp_path / name).write(definition(file_secret("a"))).definition), actor="test")
    wrong = APIClient(REMOTE_ADDR="proxy-" + "x" * 80)
    wrong.credentials(HTTP_X_API_KEY="sk_wrong_key")
    for _ in range(2):
        assert wrong.get(f"/projects/{name}/secrets").status_code == 401
    (row,) = AuditEntry.objects.filter(action="authenticate")
    assert (row.project, row.details["count"]) == (name, 2)
    assert len(row.tally_key or "") <= 160  # the column's length (audit/models.py)
