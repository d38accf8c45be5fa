"""Requests mean exactly what they say: unknown names, coerced values, repeated keys and empty or
out-of-range query values are refused, naming the field, and nothing is performed.

The endpoints and their fields are read from the OpenAPI schema, so a new endpoint or field is
covered without editing this file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.http import QueryDict
from django.urls import URLPattern
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers
from rest_framework.test import APIClient

from audit.models import AuditEntry
from secretsapi.api.serializers.strict import StrictQuerySerializer, query_names
from secretsapi.api.urls import urlpatterns
from secretsapi.api.views.base import StrictAPIView
from tests.asserts import assert_error_body
from tests.factories import Project, definition, file_secret

# Left to make test (tests/tiers.py): every endpoint times every malformed value: an exhaustive matrix.
pytestmark = pytest.mark.thorough

SCHEMA: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
COMPONENTS = SCHEMA["components"]["schemas"]


def _body_schema(operation: dict[str, Any]) -> dict[str, Any]:
    ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    schema: dict[str, Any] = COMPONENTS[ref.rsplit("/", 1)[1]]
    return schema


POST_PATHS = sorted(path for path, item in SCHEMA["paths"].items() if "post" in item)
GET_PATHS = sorted(path for path, item in SCHEMA["paths"].items() if "get" in item)
FIELDS = [(path, name, prop["type"]) for path in POST_PATHS
          for name, prop in _body_schema(SCHEMA["paths"][path]["post"])["properties"].items()]
# A JSON value of another type for each field type (none of them is coerced).
WRONG: dict[str, list[Any]] = {
    "boolean": ["false", "true", 0, 1, None], "string": [5, True, ["a"]], "array": ["a.yml", {"a": 1}],
    "object": ["a: 1", [1], True],
}
PROBES = ("/", "/health")  # unauthenticated and lenient: load balancers and browsers add parameters


@pytest.fixture
def synced(project: Project, authed_api: APIClient) -> Project:
    """db_password synced, api_key declared since: any sync or rotation that ran would write."""
    project.write(definition(file_secret("db_password", rotation_period="30d")))
    assert authed_api.post("/sync", {}, format="json").status_code == 200
    project.write(definition(file_secret("db_password", rotation_period="30d"), file_secret("api_key")))
    return project


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_refused(response: Any, status: int, *needles: str, before: dict[str, bytes], root: Path,
                   successes: int) -> None:
    body = assert_error_body(response, status)
    for needle in needles:
        assert needle in body["detail"], body["detail"]
    assert files(root) == before, "a refused request changed files"
    assert AuditEntry.objects.filter(success=True).count() == successes, "an audit row claims it was performed"


def refuse(api: APIClient, project: Project, method: str, path: str, status: int, *needles: str,
           **request: Any) -> None:
    before, successes = files(project.root), AuditEntry.objects.filter(success=True).count()
    response = getattr(api, method)(path, **request)
    assert_refused(response, status, *needles, before=before, root=project.root, successes=successes)


# --- the issue's own examples ------------------------------------------------------------------

@pytest.mark.parametrize(("path", "body", "status", "needles"), [
    ("/rotation/execute", {"secret": "db_password", "force": True}, 422,
     ["unknown field 'secret'; did you mean 'secret_name'?"]),
    ("/sync", {"dryRun": True, "force": True}, 422, ["unknown field 'dryRun'; did you mean 'dry_run'?"]),
    ("/sync", {"dry_run": "false"}, 422, ["dry_run: must be a JSON boolean (true or false), not a string."]),
    ("/policy/check", {"fail_on_warning": 0}, 422, ["fail_on_warning", "not an integer"]),
    ("/sync", {"secret_name": 5}, 422, ["secret_name: must be a JSON string, not an integer."]),
    ("/agent/sync", {"var_files": [5]}, 422, ["var_files", "must be a JSON string"]),
    ("/sync", {"force": True, "secret_name": "db_password", "what": 1, "frce": True}, 422,
     ["unknown field 'what'.", "unknown field 'frce'; did you mean 'force'?"]),
])
def test_the_issues_examples_are_refused_naming_the_field_and_nothing_is_performed(
    authed_api: APIClient, synced: Project, path: str, body: dict[str, Any], status: int, needles: list[str]
) -> None:
    refuse(authed_api, synced, "post", path, status, *needles, data=body, format="json")


@pytest.mark.parametrize(("raw", "key"), [
    ('{"dry_run": true, "dry_run": false}', "dry_run"),
    ('{"force": true, "secret_name": "db_password", "force": true}', "force"),
    ('{"var_files": [], "secret_name": null, "secret_name": "api_key"}', "secret_name"),
])
def test_a_body_repeating_a_key_is_a_400_naming_it_and_nothing_is_performed(
    authed_api: APIClient, synced: Project, raw: str, key: str
) -> None:
    refuse(authed_api, synced, "post", "/sync", 400, f"repeats the key {key!r}",
           data=raw, content_type="application/json")


def test_a_key_repeated_deep_inside_the_body_is_a_400(authed_api: APIClient, project: Project) -> None:
    raw = '{"config": {"version": "1", "secrets": [{"name": "a", "kind": "uuid", "kind": "random_hex"}]}}'
    response = authed_api.post("/config/validate", raw, content_type="application/json")
    assert "repeats the key 'kind'" in assert_error_body(response, 400)["detail"]


# --- every body field of every endpoint, from the schema ---------------------------------------

@pytest.mark.parametrize("path", POST_PATHS)
def test_every_body_says_it_takes_only_its_declared_fields(path: str) -> None:
    assert _body_schema(SCHEMA["paths"][path]["post"])["additionalProperties"] is False


@pytest.mark.parametrize("path", POST_PATHS)
def test_an_unknown_body_field_is_a_422_naming_it_on_every_endpoint(
    authed_api: APIClient, synced: Project, path: str
) -> None:
    refuse(authed_api, synced, "post", path, 422, "unknown field 'bogus_field'.",
           data={"bogus_field": True, "config": {"version": "1", "secrets": []}} if path == "/config/validate"
           else {"bogus_field": True}, format="json")


@pytest.mark.parametrize(("path", "field", "value"),
                         [(path, field, value) for path, field, kind in FIELDS for value in WRONG[kind]
                          if not (value is None and field == "secret_name")])
def test_a_value_of_another_json_type_is_refused_not_coerced(
    authed_api: APIClient, synced: Project, path: str, field: str, value: Any
) -> None:
    # /config/validate answers 400 for a `config` that is not an object (the spec's status).
    status = 400 if path == "/config/validate" else 422
    refuse(authed_api, synced, "post", path, status, "config" if status == 400 else f"{field}:",
           data={field: value}, format="json")


def test_the_spec_s_ignored_dry_run_on_rotation_check_stays_accepted(authed_api: APIClient, synced: Project) -> None:
    for value in (True, False):
        response = authed_api.post("/rotation/check", {"dry_run": value}, format="json")
        assert response.status_code == 200, response.content


def test_a_secret_name_is_taken_as_sent_not_trimmed(authed_api: APIClient, synced: Project) -> None:
    refuse(authed_api, synced, "post", "/rotation/execute", 404, "' db_password'",
           data={"secret_name": " db_password", "force": True}, format="json")


# --- query parameters ----------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "needles"), [
    ("resource=", ["resource: is empty"]),
    ("limit=", ["limit: is empty"]),
    ("action=", ["action: is empty"]),
    ("offset=9223372036854775808", ["offset", "9223372036854775807"]),
    ("offset=-1", ["offset", "digits"]),
    ("limit=5.0", ["limit: must be an integer written in digits, from 1 to 1000."]),
    ("limit=+5", ["limit", "digits"]),
    ("limit=%205", ["limit", "digits"]),
    ("limit=%EF%BC%91%EF%BC%92", ["limit", "digits"]),  # fullwidth digits: int() would take them
    ("limit=1001", ["limit", "1000"]),
    ("limit=0", ["limit", "1"]),
    ("limit=5&limit=6", ["limit: is given more than once."]),
    ("lmit=5", ["unknown query parameter 'lmit'; did you mean 'limit'?"]),
    ("page=2", ["unknown query parameter 'page'."]),
])
def test_audit_log_query_values_are_parsed_strictly(authed_api: APIClient, project: Project, query: str,
                                                     needles: list[str]) -> None:
    response = authed_api.get(f"/audit/logs?{query}")
    detail = assert_error_body(response, 422)["detail"]
    assert all(needle in detail for needle in needles), detail


def test_the_largest_offset_the_database_stores_is_an_empty_page(authed_api: APIClient, db: None) -> None:
    response = authed_api.get("/audit/logs?offset=9223372036854775807&limit=1000")
    assert response.status_code == 200 and response.json()["entries"] == []


@pytest.mark.parametrize("path", [p for p in GET_PATHS if p not in PROBES])
def test_an_unknown_query_parameter_is_a_422_on_every_get_endpoint(
    authed_api: APIClient, synced: Project, path: str
) -> None:
    url = path.replace("{secret_name}", "db_password").replace("{name}", "db_password")
    takes_var_files = any(p["name"] == "var_files" for p in SCHEMA["paths"][path]["get"].get("parameters", []))
    refuse(authed_api, synced, "get", f"{url}?vars_files=a.yml", 422,
           "unknown query parameter 'vars_files'" + ("; did you mean 'var_files'?" if takes_var_files else "."))


@pytest.mark.parametrize("path", POST_PATHS)
def test_a_query_parameter_on_a_post_endpoint_is_a_422_and_nothing_is_performed(
    authed_api: APIClient, synced: Project, path: str
) -> None:
    refuse(authed_api, synced, "post", f"{path}?force=true", 422, "unknown query parameter 'force'.",
           data={}, format="json")


@pytest.mark.parametrize("query", ["var_files=", "var_files=a.yml&var_files="])
def test_an_empty_var_files_query_value_is_a_422(authed_api: APIClient, synced: Project, query: str) -> None:
    for url in ("/secrets", "/secrets/db_password/status"):
        refuse(authed_api, synced, "get", f"{url}?{query}", 422, "var_files: is empty")


def test_a_caller_without_a_key_gets_401_before_any_parameter_is_judged(api: APIClient, db: None) -> None:
    assert_error_body(api.get("/audit/logs?bogus=1"), 401)
    assert_error_body(api.post("/sync?bogus=1", {"bogus": 1}, format="json"), 401)


@pytest.mark.parametrize("path", PROBES)
def test_the_probes_ignore_query_parameters(api: APIClient, path: str) -> None:
    assert api.get(f"{path}?probe=1&_=123").status_code == 200


def test_every_api_view_accepts_exactly_the_query_parameters_the_schema_declares() -> None:
    for pattern in urlpatterns:
        if not isinstance(pattern, URLPattern):
            continue  # /projects/{project}/: the same views again (tests/projects)
        view = pattern.callback.cls  # type: ignore[attr-defined]
        assert issubclass(view, StrictAPIView), view
        path = "/" + str(pattern.pattern).replace("<str:", "{").replace(">", "}")
        for operation in SCHEMA["paths"][path].values():
            declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
            assert declared == set(query_names(view.query_serializer)), path


class FlagQuerySerializer(StrictQuerySerializer):
    flag = serializers.BooleanField(required=False)  # DRF's own class: the base parses it strictly


@pytest.mark.parametrize(("query", "expected"),
                         [("", {}), ("flag=true", {"flag": True}), ("flag=false", {"flag": False})])
def test_a_query_boolean_is_true_or_false_and_an_absent_one_stays_absent(query: str, expected: dict[str, Any]) -> None:
    serializer = FlagQuerySerializer(data=QueryDict(query))
    assert serializer.is_valid(), serializer.errors
    assert dict(serializer.validated_data) == expected


@pytest.mark.parametrize("value", ["1", "0", "True", "FALSE", "yes", "on", " true"])
def test_a_query_boolean_in_any_other_spelling_is_refused(value: str) -> None:
    serializer = FlagQuerySerializer(data=QueryDict(f"flag={value}"))
    assert not serializer.is_valid()
    assert serializer.errors == {"flag": ["must be true or false."]}


def test_a_body_of_many_long_unknown_keys_gets_a_short_answer(authed_api: APIClient, synced: Project) -> None:
    body = {f"{'k' * 5000}{i}": True for i in range(200)}
    refuse(authed_api, synced, "post", "/sync", 422, f"unknown field '{'k' * 64}...'.", "(195 more unknown fields.)",
           data=body, format="json")
    assert len(authed_api.post("/sync", body, format="json").json()["detail"]) < 1000
