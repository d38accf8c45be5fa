"""An invalid definition is the author's mistake, answered 4xx naming the problem, never 500 (issue 36, point 9).

Found by replacing each part of a definition that uses every section with values of the wrong
type and sending it to every endpoint that reads the definition: the definition error was a
500 like a crash, and render crashed (a generic 500) when ``secrets`` or ``templates`` had the
wrong shape. The same in a job (its status), and on the command line (exit 1 with the problem).
"""

from __future__ import annotations

import copy
from io import StringIO
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from tests.factories import Project

BASE: dict[str, Any] = {
    "version": "1.0",
    "variables": {"env": "dev", "n": 16},
    "providers": {"aws": {"kind": "aws", "auth": {"kind": "ambient"}}},
    "environments": {"default": "dev", "profiles": {"dev": {"var_files": [], "target_profile": "tp"}}},
    "target_profiles": {"tp": {"target_overrides": {"file": {"format": "dotenv"}}}},
    "templates": {"creds": {"fields": {"user": {"generator": {"kind": "static", "config": {"value": "u"}}},
                                       "pw": {"generator": {"kind": "random_password"}}},
                            "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/t.env"}}]}},
    "secrets": [
        {"name": "db", "kind": "random_password", "config": {"length": "{{ var.n }}"}, "rotation_period": "30d",
         "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/{{ var.env }}.env"}}]},
        {"name": "app", "kind": "templates.creds"},
    ],
    "policies": {"age": {"kind": "rotation", "max_age": "60d"}},
}
# (where, value): the wrong shapes that broke an endpoint, and one of each kind per section.
BROKEN = [
    (("secrets",), 1), (("secrets",), True), (("templates",), "x"), (("templates",), [1]),
    (("templates", "creds", "fields"), [None]), (("templates", "creds", "fields"), "{{ var.nope }}"),
    (("variables",), [1]), (("environments",), "x"), (("environments", "profiles"), [1]),
    (("target_profiles", "tp"), 1), (("providers", "aws"), "x"), (("policies",), [None]),
    (("secrets", 0, "targets"), {"a": 1}), (("secrets", 0, "config"), [1]), (("secrets", 0), "x"),
    ((), [1]), ((), "just text"),
]
READS = [("get", "/secrets"), ("get", "/secrets/db/status"), ("post", "/sync"), ("post", "/agent/sync"),
         ("post", "/drift/check"), ("post", "/rotation/check"), ("post", "/rotation/execute"),
         ("post", "/policy/check"), ("post", "/config/render"), ("get", "/providers"), ("get", "/secret-types")]


def _broken(where: tuple[Any, ...], value: Any) -> Any:
    if not where:
        return value
    doc = copy.deepcopy(BASE)
    node = doc
    for part in where[:-1]:
        node = node[part]
    node[where[-1]] = value
    return doc


# `make check` runs one case of each kind (a section's shape, a template's field, a secret's config,
# a document that is no mapping); the whole matrix, 17 cases of 12 calls each, is `thorough`.
QUICK = {0, 4, 13, 16}
CASES = [pytest.param(where, value, id=f"{'.'.join(map(str, where)) or 'doc'}={value!r}",
                      marks=() if index in QUICK else pytest.mark.thorough)
         for index, (where, value) in enumerate(BROKEN)]


@pytest.mark.parametrize(("where", "value"), CASES)
def test_no_endpoint_answers_an_invalid_definition_with_a_500(
    authed_api: APIClient, project: Project, where: tuple[Any, ...], value: Any
) -> None:
    project.write(yaml.safe_dump(_broken(where, value)))
    for method, path in READS:
        response = authed_api.get(path) if method == "get" else authed_api.post(path, {}, format="json")
        assert response.status_code < 500, (path, response.content)
        body = response.json()
        if response.status_code >= 400:
            assert body["detail"] != "An unexpected error occurred; the server log has the details.", path
    answer = authed_api.post("/config/validate", {"config": _broken(where, value) if where else {"x": value}},
                             format="json")
    assert answer.status_code == 200 and answer.json()["valid"] is False


def test_an_invalid_definition_is_422_naming_the_place(authed_api: APIClient, project: Project) -> None:
    """(One secret's status still answers from the lockfile, and render shows the definition as
    written: neither needs a valid one.)"""
    project.write(yaml.safe_dump(_broken(("secrets", 0, "rotation_period"), "90x")))
    for method, path in [read for read in READS[:-2] if read[1] not in ("/secrets/db/status", "/config/render")]:
        response = authed_api.get(path) if method == "get" else authed_api.post(path, {}, format="json")
        assert response.status_code == 422, (path, response.content)
        assert response.json()["error"] == "Definition invalid"
        assert "secrets[0].rotation_period" in response.json()["detail"]


def test_a_job_on_an_invalid_definition_ends_with_422(authed_api: APIClient, project: Project) -> None:
    project.write(yaml.safe_dump(_broken(("secrets", 0, "rotation_period"), "90x")))
    queued = authed_api.post("/sync", {"async": True}, format="json")
    assert queued.status_code == 202
    job = authed_api.get(f"/jobs/{queued.json()['id']}").json()
    assert (job["state"], job["status"]) == ("failed", 422)
    assert "secrets[0].rotation_period" in job["result"]["detail"]


@pytest.mark.parametrize("command", ["sync", "status", "drift", "policy", "validate", "rotate"])
def test_the_command_line_names_the_problem_and_exits_1(db: None, project: Project, command: str) -> None:
    project.write(yaml.safe_dump(_broken(("secrets", 0, "rotation_period"), "90x")))
    out = StringIO()
    with pytest.raises(CommandError) as failed:
        call_command(command, "--json", stdout=out)
    assert failed.value.returncode in (1, 2)
    assert "secrets[0].rotation_period" in out.getvalue() + str(failed.value)
    assert "internal_error" not in out.getvalue()
