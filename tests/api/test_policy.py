"""POST /policy/check: rotation, access and compliance policies, severities, fail_on_warning, audit."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, definition, file_secret

ITEM_FIELDS = {"secret", "policy", "message", "severity"}


def check(client: APIClient, body: dict[str, Any] | None = None) -> Any:
    response = client.post("/policy/check", body or {}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def items(body: dict[str, Any], policy: str, secret: str | None = None) -> list[dict[str, Any]]:
    """Every item of ``policy`` (about ``secret``, if given) across errors, warnings and info."""
    found = [i for group in ("errors", "warnings", "info") for i in body[group] if i["policy"] == policy]
    return [i for i in found if secret is None or i["secret"] == secret]


def violations(body: dict[str, Any], policy: str, secret: str) -> list[dict[str, Any]]:
    return [i for i in body["errors"] + body["warnings"] if i["policy"] == policy and i["secret"] == secret]


def sync(client: APIClient) -> None:
    response = client.post("/sync", {}, format="json")
    assert response.status_code == 200 and response.json()["secrets_failed"] == [], response.content


# -- rotation policies -----------------------------------------------------------------------


def test_require_rotation_period_reports_a_secret_without_one(authed_api: APIClient, project: Project) -> None:
    project.write(definition(
        file_secret("db", rotation_period="30d"), file_secret("legacy"),
        policies={"rotate": {"kind": "rotation", "require_rotation_period": True}},
    ))
    body = check(authed_api)
    assert body["compliant"] is False
    (item,) = [i for i in body["errors"] if i["policy"] == "rotate"]
    assert set(item) == ITEM_FIELDS
    assert (item["secret"], item["severity"]) == ("legacy", "error")
    assert isinstance(item["message"], str) and item["message"]
    assert violations(body, "rotate", "db") == []


def test_max_age_reports_a_rotation_period_that_exceeds_it(authed_api: APIClient, project: Project) -> None:
    project.write(definition(
        file_secret("short", rotation_period="30d"), file_secret("long", rotation_period="180d"),
        policies={"age": {"kind": "rotation", "max_age": "90d"}},
    ))
    body = check(authed_api)
    assert [(i["secret"], i["severity"]) for i in body["errors"] if i["policy"] == "age"] == [("long", "error")]
    assert body["compliant"] is False


def test_max_age_compares_periods_across_units(authed_api: APIClient, project: Project) -> None:
    # 1y = 365 days > 12w = 84 days; 2m = 60 days <= 12w.
    project.write(definition(
        file_secret("yearly", rotation_period="1y"), file_secret("bimonthly", rotation_period="2m"),
        policies={"age": {"kind": "rotation", "max_age": "12w"}},
    ))
    body = check(authed_api)
    assert [i["secret"] for i in body["errors"] if i["policy"] == "age"] == ["yearly"]


def test_rotation_policy_reports_an_overdue_secret(authed_api: APIClient, project: Project) -> None:
    project.write(definition(
        file_secret("fresh", rotation_period="30d"), file_secret("late", rotation_period="30d"),
        policies={"rotate": {"kind": "rotation"}},
    ))
    sync(authed_api)
    project.backdate("late", 40)
    body = check(authed_api)
    (item,) = [i for i in body["errors"] if i["policy"] == "rotate"]
    assert item["secret"] == "late"
    assert "overdue" in item["message"]


# -- access policies -------------------------------------------------------------------------


def test_denied_target_kind_is_reported(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db"), policies={"no_files": {"kind": "access", "denied_targets": ["file"]}}))
    body = check(authed_api)
    (item,) = [i for i in body["errors"] if i["policy"] == "no_files"]
    assert (item["secret"], item["severity"]) == ("db", "error")
    assert "file" in item["message"]
    assert body["compliant"] is False


def test_target_kind_outside_allowed_targets_is_reported(authed_api: APIClient, project: Project) -> None:
    project.write(definition(
        file_secret("db"), policies={"ssm_only": {"kind": "access", "allowed_targets": ["ssm_parameter"]}},
    ))
    body = check(authed_api)
    (item,) = [i for i in body["errors"] if i["policy"] == "ssm_only"]
    assert item["secret"] == "db"
    assert body["compliant"] is False


def test_allowed_target_kind_passes_the_access_policy(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db"), policies={"files": {"kind": "access", "allowed_targets": ["file"]}}))
    body = check(authed_api)
    assert violations(body, "files", "db") == []
    assert body["compliant"] is True


# -- compliance policies ---------------------------------------------------------------------


def soc2(*secrets: dict[str, Any]) -> dict[str, Any]:
    return definition(*secrets, policies={"soc2": {"kind": "compliance", "standard": "soc2"}})


def test_soc2_reports_a_rotation_period_over_90_days(authed_api: APIClient, project: Project) -> None:
    project.write(soc2(file_secret("ok", rotation_period="90d"), file_secret("slow", rotation_period="91d")))
    sync(authed_api)
    body = check(authed_api)
    assert [i["secret"] for i in body["errors"] if i["policy"] == "soc2"] == ["slow"]
    assert body["compliant"] is False


def test_soc2_reports_a_secret_without_rotation_period(authed_api: APIClient, project: Project) -> None:
    project.write(soc2(file_secret("ok", rotation_period="30d"), file_secret("forever")))
    sync(authed_api)
    body = check(authed_api)
    assert [i["secret"] for i in body["errors"] if i["policy"] == "soc2"] == ["forever"]


def test_soc2_reports_secrets_not_tracked_in_the_lockfile_until_synced(authed_api: APIClient, project: Project) -> None:
    project.write(soc2(file_secret("db", rotation_period="30d")))
    before = check(authed_api)
    (item,) = [i for i in before["errors"] if i["policy"] == "soc2"]
    assert item["secret"] == "db"
    assert "lockfile" in item["message"]
    assert before["compliant"] is False
    sync(authed_api)
    after = check(authed_api)
    assert violations(after, "soc2", "db") == []
    assert after["compliant"] is True


def test_metadata_compliance_enables_soc2_without_a_policy_entry(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("slow", rotation_period="180d"), metadata={"compliance": ["SOC2"]}))
    sync(authed_api)
    body = check(authed_api)
    offending = [i for i in body["errors"] if i["secret"] == "slow"]
    assert offending and all(i["severity"] == "error" for i in offending)
    assert any("90" in i["message"] for i in offending)
    assert body["compliant"] is False


def test_iso27001_allows_365_days_but_not_400(authed_api: APIClient, project: Project) -> None:
    project.write(definition(
        file_secret("yearly", rotation_period="365d"), file_secret("longer", rotation_period="400d"),
        policies={"iso": {"kind": "compliance", "standard": "iso27001"}},
    ))
    sync(authed_api)
    body = check(authed_api)
    assert [i["secret"] for i in body["errors"] if i["policy"] == "iso"] == ["longer"]


def test_fully_compliant_soc2_project_has_no_errors(authed_api: APIClient, project: Project) -> None:
    project.write(soc2(file_secret("db", rotation_period="90d"), file_secret("api", rotation_period="30d")))
    sync(authed_api)
    body = check(authed_api)
    assert (body["compliant"], body["errors"], body["warnings"]) == (True, [], [])


# -- severities and compliant ----------------------------------------------------------------


def warning_policy(project: Project) -> None:
    project.write(definition(
        file_secret("legacy"),
        policies={"rotate": {"kind": "rotation", "severity": "warning", "require_rotation_period": True}},
    ))


def test_warning_severity_goes_to_warnings_and_keeps_compliant(authed_api: APIClient, project: Project) -> None:
    warning_policy(project)
    body = check(authed_api)
    assert body["errors"] == []
    (item,) = [i for i in body["warnings"] if i["policy"] == "rotate"]
    assert (item["secret"], item["severity"]) == ("legacy", "warning")
    assert body["compliant"] is True


def test_fail_on_warning_makes_warnings_non_compliant(authed_api: APIClient, project: Project) -> None:
    warning_policy(project)
    body = check(authed_api, {"fail_on_warning": True})
    assert [i["secret"] for i in body["warnings"] if i["policy"] == "rotate"] == ["legacy"]
    assert body["compliant"] is False


def test_info_items_never_affect_compliant(authed_api: APIClient, project: Project) -> None:
    project.write(definition(
        file_secret("legacy"),
        policies={"rotate": {"kind": "rotation", "severity": "info", "require_rotation_period": True}},
    ))
    for body in (check(authed_api), check(authed_api, {"fail_on_warning": True})):
        assert (body["errors"], body["warnings"]) == ([], [])
        assert any(i["secret"] == "legacy" and i["severity"] == "info" for i in body["info"])
        assert body["compliant"] is True


def test_every_item_has_the_four_fields_and_its_list_severity(authed_api: APIClient, project: Project) -> None:
    project.write(definition(
        file_secret("legacy"), file_secret("db", rotation_period="180d"),
        policies={
            "rotate": {"kind": "rotation", "severity": "warning", "require_rotation_period": True},
            "age": {"kind": "rotation", "max_age": "90d"},
        },
    ))
    body = check(authed_api)
    for group, severity in (("errors", "error"), ("warnings", "warning"), ("info", "info")):
        for item in body[group]:
            assert set(item) == ITEM_FIELDS
            assert item["severity"] == severity


def test_disabled_policy_produces_no_items(authed_api: APIClient, project: Project) -> None:
    project.write(definition(
        file_secret("legacy"),
        policies={"rotate": {"kind": "rotation", "enabled": False, "require_rotation_period": True}},
    ))
    body = check(authed_api)
    assert items(body, "rotate") == []
    assert (body["compliant"], body["errors"], body["warnings"]) == (True, [], [])


# -- errors and audit ------------------------------------------------------------------------


def test_missing_definition_file_is_404(authed_api: APIClient, project: Project) -> None:
    response = authed_api.post("/policy/check", {}, format="json")
    assert response.status_code == 404
    assert set(response.json()) == {"error", "detail", "timestamp"}


def test_wrong_fail_on_warning_type_is_422(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db")))
    response = authed_api.post("/policy/check", {"fail_on_warning": "maybe"}, format="json")
    assert response.status_code == 422
    assert "fail_on_warning" in response.json()["detail"]


def test_policy_check_without_key_is_401(api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db")))
    assert api.post("/policy/check", {}, format="json").status_code == 401


def period_by_environment(project: Project) -> None:
    """A 30-day period in dev, 90 days in prod (``prod.yml``), under a 60-day max_age."""
    project.write(definition(file_secret("db", rotation_period="{{ var.period }}"), variables={"period": "30d"},
                             policies={"age": {"kind": "rotation", "max_age": "60d"}}))
    (project.root / "prod.yml").write_text("period: 90d\n")
    project.declare("prod.yml", "nope.yml", "../prod.yml")


def test_policies_are_checked_on_the_definition_the_var_files_render(authed_api: APIClient, project: Project) -> None:
    period_by_environment(project)
    assert violations(check(authed_api), "age", "db") == []
    (item,) = violations(check(authed_api, {"var_files": ["prod.yml"]}), "age", "db")
    assert item["message"] == "rotation_period 90d exceeds max_age 60d"


@pytest.mark.parametrize("path", ["/policy/check", "/policy"])
def test_policy_var_files_are_404_when_missing_and_400_outside_the_folder(
    authed_api: APIClient, project: Project, path: str
) -> None:
    period_by_environment(project)
    assert authed_api.post(path, {"var_files": ["nope.yml"]}, format="json").status_code == 404
    assert authed_api.post(path, {"var_files": ["../prod.yml"]}, format="json").status_code == 400


def test_policy_audit_row_records_the_var_files(authed_api: APIClient, project: Project) -> None:
    period_by_environment(project)
    check(authed_api, {"var_files": ["prod.yml"]})
    assert AuditEntry.objects.get(action="check_policy").details["var_files"] == ["prod.yml"]


def test_policy_check_is_audited(authed_api: APIClient, project: Project) -> None:
    warning_policy(project)
    check(authed_api, {"fail_on_warning": True})
    row = AuditEntry.objects.get(action="check_policy")
    assert (row.resource, row.success, row.user) == ("secrets", True, "service")
    assert row.details["fail_on_warning"] is True
    assert row.details["compliant"] is False
    assert (row.details["errors"], row.details["warnings"]) == (0, 1)


# -- what SecretZero has and this service does not check ----------------------------------------


def test_a_policy_of_a_kind_not_checked_here_is_a_warning_item(authed_api: APIClient, project: Project) -> None:
    project.write(definition(
        file_secret("db", rotation_period="30d"),
        policies={"identity": {"kind": "provider_identity", "require": ["aws"]}},
    ))
    body = check(authed_api)
    assert body["compliant"] is True
    (item,) = items(body, "identity")
    assert item["severity"] == "warning" and "provider_identity" in item["message"]


def test_a_policy_without_a_kind_is_a_warning_item(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", rotation_period="30d"), policies={"bare": {"severity": "error"}}))
    (item,) = items(check(authed_api), "bare")
    assert item["severity"] == "warning" and "no kind" in item["message"]


def test_an_unknown_compliance_standard_is_a_warning_item(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", rotation_period="30d"),
                             metadata={"compliance": ["soc2", "security-best-practices"]}))
    body = check(authed_api)
    (item,) = items(body, "metadata.compliance")
    assert item["severity"] == "warning" and "security-best-practices" in item["message"]
    assert items(body, "soc2")  # the known standard is still checked


def test_fail_on_warning_counts_a_policy_not_checked_here(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", rotation_period="30d"),
                             policies={"identity": {"kind": "provider_identity"}}))
    assert check(authed_api, {"fail_on_warning": True})["compliant"] is False
