"""Fuzz every operation from the service's own OpenAPI schema (schemathesis, in-process WSGI).

Bounded and reproducible: at most 25 generated examples per operation, derandomized (a fixed
seed), no example database, no network. Every response must be a non-5xx that conforms to the
schema (status, content type, body, headers), and every error must carry the error body.

What it found is pinned by regression tests in test_found_bugs.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from django.test import override_settings
from hypothesis import HealthCheck, settings
from rest_framework.test import APIClient

from project.wsgi import application
from tests.factories import TEST_KEY, Project, definition, file_secret

# The whole module: the unit tier does not even import it (schemathesis, and the schema it loads).
pytestmark = pytest.mark.fuzz

# A schema-valid request may still be refused by a domain rule with a documented 400 (a
# var_files path that leaves the definition folder or cannot exist), 403 (value reads off) or
# 404 (unknown secret), and with 422 for strings holding lone surrogates (an escaped \udXXX in
# JSON; refused by every text field, which the schema does not say): answers, not wrong
# rejections. NUL, which every text field refuses too, the schema's patterns exclude.
# The coverage phase is left to tests/fuzz/test_schemathesis_cli.py, which runs every phase
# against a real server: here it generated its cases while collecting, in every xdist worker
# (4 s each), for tests that run in one.
CONFIG = schemathesis.Config.from_dict({
    "checks": {"positive_data_acceptance": {
        "expected-statuses": ["2xx", "400", "401", "403", "404", "409", "422"],
    }},
    "phases": {"coverage": {"enabled": False}},
})
# Loaded at import, outside any test's database access: with a key configured, the loopback
# guard of insecure mode (which asks the database whether a key row exists) has nothing to ask.
with override_settings(SERVICE_API_KEY=TEST_KEY):
    schema = schemathesis.openapi.from_wsgi("/openapi.json", application, config=CONFIG)

ERROR_KEYS = {"error", "detail", "timestamp"}


@schemathesis.check
def error_responses_have_the_error_body(
    ctx: Any, response: schemathesis.Response, case: schemathesis.Case[Any]
) -> bool:
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body, dict) and set(body) == ERROR_KEYS, f"not the error body: {body!r}"
        assert all(isinstance(body[key], str) and body[key] for key in ERROR_KEYS)
    return True


@contextmanager
def request_signals_keep_the_connection() -> Iterator[None]:
    """Calls go straight to the WSGI handler, whose request signals would close the database
    connection that holds the test's transaction (a no-op on in-memory SQLite, fatal on
    PostgreSQL); Django's own test client disconnects them the same way."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def fuzz_project(tmp_path: Path, project: Project, authed_api: APIClient) -> Iterator[Project]:
    """A few secrets of several kinds and files, already synced, so operations have work to do."""
    project.write(definition(
        file_secret("db_password", "out/app.env", rotation_period="30d"),
        file_secret("api_key", "out/app.env", kind="random_hex", rotation_period="90d"),
        file_secret("token", "out/extra.json", kind="random_string", one_time=True),
        file_secret("session", "out/extra.yaml", kind="uuid"),
        policies={"rotation": {"kind": "rotation", "require_rotation_period": True, "max_age": "60d"}},
        metadata={"compliance": ["soc2"]},
    ))
    (project.root / "vars.yml").write_text("env: fuzz\n")
    assert authed_api.post("/sync", {}, format="json").status_code == 200
    with request_signals_keep_the_connection():
        yield project


@schema.parametrize()
@settings(max_examples=25, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
def test_every_operation_answers_within_its_schema_and_never_5xx(
    case: schemathesis.Case[Any], fuzz_project: Project
) -> None:
    # The key replaces the one generated; a case whose negative mutation dropped the header is
    # sent without one, as generated (its 401 is the rejection the check expects).
    headers = {"X-API-Key": TEST_KEY} if "X-API-Key" in (case.headers or {}) else {}
    response = case.call(headers=headers)
    # Every check, negative_data_rejection included: the server refuses exactly what the schema
    # does not allow (closed bodies, JSON types without coercion, bounds).
    case.validate_response(response, headers=headers, additional_checks=[error_responses_have_the_error_body])
