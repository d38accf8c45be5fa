"""The OpenAPI schema validates, and the docs pages work with no internet."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # a dependency of schemathesis, without stubs
import pytest
import yaml
from rest_framework.test import APIClient

from apikeys import keys
from tests.factories import Project


@pytest.mark.slow
def test_schema_validates_without_warnings() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


def test_schema_declares_the_api_key_scheme_and_error_body(api: APIClient) -> None:
    schema = api.get("/openapi.json").json()
    assert schema["openapi"].startswith("3.")
    schemes = schema["components"]["securitySchemes"]
    assert schemes["ApiKeyAuth"] == {"type": "apiKey", "in": "header", "name": "X-API-Key"}
    assert {k: v for k, v in schemes["BearerAuth"].items() if k != "description"} == {"type": "http",
                                                                                      "scheme": "bearer"}
    assert set(schema["components"]["schemas"]["Error"]["required"]) == {"error", "detail", "timestamp"}


def test_public_endpoints_need_no_security_in_the_schema(api: APIClient) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    for path in ("/", "/health"):
        assert paths[path]["get"].get("security", []) in ([], [{}]), path
    assert paths["/audit/logs"]["get"]["security"] == [{"ApiKeyAuth": []}, {"BearerAuth": []}]


def test_public_metrics_are_documented_as_needing_no_key(api: APIClient, settings: Any) -> None:
    # The schema once answered 500 here: /metrics asked for the request's headers before there was one.
    settings.SERVICE_METRICS_PUBLIC = True
    answer = api.get("/openapi.json")
    assert answer.status_code == 200
    assert answer.json()["paths"]["/metrics"]["get"]["security"] == [{}]


def test_a_server_in_insecure_mode_serves_a_schema_where_the_key_is_optional(db: None, insecure: None) -> None:
    """It answers without a key, and its schema says so (schemathesis' auth checks then agree)."""
    paths = APIClient().get("/openapi.json", HTTP_HOST="127.0.0.1", REMOTE_ADDR="127.0.0.1").json()["paths"]
    assert paths["/audit/logs"]["get"]["security"] == [{"ApiKeyAuth": []}, {"BearerAuth": []}, {}]
    assert paths["/sync"]["post"]["security"] == [{"ApiKeyAuth": []}, {"BearerAuth": []}, {}]


def test_a_key_row_alone_keeps_the_key_required_in_the_schema(db: None, insecure: None) -> None:
    keys.create("ci", ["read"], actor="test")
    paths = APIClient().get("/openapi.json", HTTP_HOST="127.0.0.1", REMOTE_ADDR="127.0.0.1").json()["paths"]
    assert paths["/audit/logs"]["get"]["security"] == [{"ApiKeyAuth": []}, {"BearerAuth": []}]


def assets_of(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"]+)"', html)


def test_docs_pages_reference_no_external_host(api: APIClient) -> None:
    for page in ("/docs", "/redoc"):
        html = api.get(page).content.decode()
        assert not re.search(r"https?://", html), page
        assert "//" not in "".join(a for a in assets_of(html) if a.startswith("//")), page


def test_docs_assets_are_served(api: APIClient) -> None:
    for page in ("/docs", "/redoc"):
        assets = [a for a in assets_of(api.get(page).content.decode()) if a.startswith("/static/")]
        assert assets, page
        for asset in assets:
            response = api.get(asset)
            assert response.status_code == 200, asset


# --- Docs that teach: every operation explained, examples that work, headers declared ---------

EXAMPLE_DEFINITION = Path(__file__).resolve().parents[2] / "examples" / "Secretfile.yml"
METHODS = ("get", "post", "put", "patch", "delete")


def schema_of(api: APIClient) -> dict[str, Any]:
    schema: dict[str, Any] = api.get("/openapi.json").json()
    return schema


def operations(schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def as_json_schema(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable`` in JSON Schema terms, so jsonschema judges null as the spec does."""
    if isinstance(node, list):
        return [as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: as_json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable") and "type" in node:
        out["type"] = [node["type"], "null"]
    elif node.get("nullable"):
        out = {"anyOf": [out, {"type": "null"}]}
    return out


def validator_for(schema: dict[str, Any], body_schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    root = as_json_schema({**body_schema, "components": schema["components"]})
    return jsonschema.Draft202012Validator(root)


def media_examples(operation: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str, Any]]:
    """(where, media schema, example name, value) for the request body and every response."""
    places = [("request", operation.get("requestBody", {}))]
    places += [(f"response {status}", response) for status, response in operation["responses"].items()]
    for where, place in places:
        media = place.get("content", {}).get("application/json", {})
        for name, example in media.get("examples", {}).items():
            yield where, media["schema"], name, example["value"]


def test_every_operation_has_a_summary_a_description_and_a_declared_tag(api: APIClient) -> None:
    schema = schema_of(api)
    declared = [tag["name"] for tag in schema["tags"]]
    assert all(tag.get("description") for tag in schema["tags"])
    for path, method, operation in operations(schema):
        where = f"{method.upper()} {path}"
        assert operation.get("summary"), where
        assert len(operation.get("description", "")) > len(operation["summary"]), where
        assert len(operation.get("tags", [])) == 1 and operation["tags"][0] in declared, where


def test_every_declared_tag_is_used_and_in_reading_order(api: APIClient) -> None:
    schema = schema_of(api)
    used = {operation["tags"][0] for _, _, operation in operations(schema)}
    declared = [tag["name"] for tag in schema["tags"]]
    assert set(declared) == used
    assert declared[0] == "service" and declared.index("secrets") < declared.index("sync") < declared.index("audit")


def test_operation_ids_are_chosen_names_not_generated_ones(api: APIClient) -> None:
    ids = [operation["operationId"] for _, _, operation in operations(schema_of(api))]
    assert len(ids) == len(set(ids))
    generated = re.compile(r"_(retrieve|create|list|update|partial_update|destroy)$")
    assert not [i for i in ids if generated.search(i)]
    assert "root_retrieve" not in ids


def test_every_operation_shows_a_success_example(api: APIClient) -> None:
    for path, method, operation in operations(schema_of(api)):
        # The operation's success (200, 201 for a creation; 204 has no body to show).
        status = min(code for code in operation["responses"] if code.startswith("2"))
        if status == "204":
            continue
        # JSON, or /metrics' text exposition.
        content = operation["responses"][status]["content"]
        success = content.get("application/json") or content["text/plain"]
        assert success.get("examples"), f"{method.upper()} {path}"


def test_every_request_body_has_an_example_and_no_string_placeholder(api: APIClient) -> None:
    for path, method, operation in operations(schema_of(api)):
        if "requestBody" not in operation:
            continue
        examples = operation["requestBody"]["content"]["application/json"].get("examples", {})
        assert examples, f"{method.upper()} {path}"
        assert '"string"' not in json.dumps(examples), f"{method.upper()} {path}"


def test_every_example_validates_against_its_own_schema(api: APIClient) -> None:
    schema = schema_of(api)
    for path, method, operation in operations(schema):
        for where, media_schema, name, value in media_examples(operation):
            problems = [e.message for e in validator_for(schema, media_schema).iter_errors(value)]
            assert not problems, f"{method.upper()} {path} {where} example {name!r}: {problems}"


@pytest.fixture
def example_project(project: Project) -> Project:
    return project.write(EXAMPLE_DEFINITION.read_text())


def body_examples(schema: dict[str, Any], path: str) -> dict[str, Any]:
    examples: dict[str, Any] = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]["examples"]
    return {name: example["value"] for name, example in examples.items()}


@pytest.mark.thorough
@pytest.mark.parametrize("path", ["/sync", "/agent/sync", "/rotation/check", "/rotation/execute", "/drift/check",
                                  "/drift", "/policy/check", "/policy", "/config/validate", "/config/render"])
def test_request_examples_answer_200_against_the_example_definition(
    path: str, example_project: Project, authed_api: APIClient
) -> None:
    examples = body_examples(schema_of(authed_api), path)
    if path != "/sync":  # the checks and rotations have something to look at; /sync starts from nothing
        assert authed_api.post("/sync", {}, format="json").status_code == 200
    for name, value in examples.items():
        response = authed_api.post(path, value, format="json")
        assert response.status_code == 200, f"{path} example {name!r}: {response.json()}"


def test_the_first_sync_example_is_what_try_it_out_sends_and_it_works(
    example_project: Project, authed_api: APIClient
) -> None:
    first = next(iter(body_examples(schema_of(authed_api), "/sync").values()))
    assert first["secret_name"] in {s["name"] for s in authed_api.get("/secrets").json()["secrets"]}
    assert authed_api.post("/sync", first, format="json").status_code == 200


def test_every_401_declares_the_www_authenticate_header_the_server_sends(api: APIClient) -> None:
    schema = schema_of(api)
    sent = api.get("/secrets")
    assert sent.status_code == 401
    secured = [(p, m, o) for p, m, o in operations(schema) if o.get("security", [{}]) != [{}]]
    assert secured
    for path, method, operation in secured:
        header = operation["responses"]["401"].get("headers", {}).get("WWW-Authenticate")
        assert header, f"{method.upper()} {path}"
        assert header["schema"]["example"] == sent["WWW-Authenticate"]


def test_the_value_read_declares_cache_control_no_store(api: APIClient) -> None:
    success = schema_of(api)["paths"]["/secrets/{name}"]["get"]["responses"]["200"]
    assert success["headers"]["Cache-Control"]["schema"]["example"] == "no-store"


@pytest.mark.thorough
def test_path_parameters_offer_a_secret_of_the_example_definition(api: APIClient) -> None:
    names = {s["name"] for s in yaml.safe_load(EXAMPLE_DEFINITION.read_text())["secrets"]}
    for path in ("/secrets/{name}", "/secrets/{secret_name}/status"):
        (parameter,) = [p for p in schema_of(api)["paths"][path]["get"]["parameters"] if p["in"] == "path"]
        assert parameter.get("description")
        assert {e["value"] for e in parameter["examples"].values()} <= names


def test_every_response_says_what_it_is(api: APIClient) -> None:
    for path, method, operation in operations(schema_of(api)):
        for status, response in operation["responses"].items():
            assert response.get("description"), f"{method.upper()} {path} {status}"
