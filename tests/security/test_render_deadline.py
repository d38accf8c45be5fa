"""Template rendering bounded in time (issue 25, point 5): a ``local/template`` file, or an
interpolated expression, that loops for hours is stopped at SERVICE_RENDER_TIMEOUT in the
process that runs it; that target or secret fails with the reason and every lock is released."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from jinja2.sandbox import SandboxedEnvironment
from rest_framework.test import APIClient

from secretsapi.service.definition.budget import InterpolationLimits
from secretsapi.service.definition.deadline import DeadlinePassed, deadline
from secretsapi.service.definition.interpolation import interpolate
from secretsapi.service.errors import DefinitionInvalid
from tests.factories import Project, definition, file_secret

# Left to make test (tests/tiers.py): renders stopped at their deadline.
pytestmark = pytest.mark.thorough

LOOPS = ("{% for a in range(100000) %}{% for b in range(100000) %}{% for c in range(100000) %}"
         "{% endfor %}{% endfor %}{% endfor %}")


@pytest.fixture
def one_second(settings: Any) -> None:
    settings.SERVICE_RENDER_TIMEOUT = 1


def _template_secret(name: str, template: str, output: str) -> dict[str, Any]:
    config = {"template_path": template, "output_path": output}
    return {"name": name, "kind": "random_password",
            "targets": [{"provider": "local", "kind": "template", "config": config}]}


def test_three_nested_loops_in_a_template_stop_with_a_clear_error(
    authed_api: APIClient, project: Project, one_second: None
) -> None:
    (project.root / "loops.j2").write_text(LOOPS + "{{ secrets.db }}\n")
    project.write(definition(_template_secret("db", "loops.j2", "out/loops.txt"), file_secret("api")))
    result = authed_api.post("/sync", {}, format="json").json()
    (error,) = result["errors"]
    assert error["message"] == ("template 'loops.j2' took longer than SERVICE_RENDER_TIMEOUT (1 s): "
                                "its rendering was stopped")
    assert result["secrets_generated"] == ["api"]
    assert not (project.root / "out/loops.txt").exists()


def test_the_locks_are_released_after_a_stopped_render(
    authed_api: APIClient, project: Project, one_second: None
) -> None:
    (project.root / "loops.j2").write_text(LOOPS)
    project.write(definition(_template_secret("db", "loops.j2", "out/loops.txt")))
    authed_api.post("/sync", {}, format="json")
    (project.root / "loops.j2").write_text("{{ secrets.db }}\n")
    result = authed_api.post("/sync", {}, format="json").json()
    assert result["errors"] == [] and result["secrets_generated"] == ["db"]
    assert (project.root / "out/loops.txt").exists()


def test_a_normal_template_renders_under_the_deadline(
    authed_api: APIClient, project: Project, one_second: None
) -> None:
    (project.root / "app.j2").write_text("{% for i in range(3) %}{{ i }}{% endfor %}={{ secrets.db }}\n")
    project.write(definition(_template_secret("db", "app.j2", "out/app.txt")))
    assert authed_api.post("/sync", {}, format="json").json()["errors"] == []
    assert (project.root / "out/app.txt").read_text().startswith("012=")


def test_an_interpolation_past_its_deadline_stops_with_one_error() -> None:
    # A deadline already passed (negative seconds): every expression would be past it.
    values = {f"s{i}": f"{{{{ var.env }}}}-{i}" for i in range(5)}
    limits = InterpolationLimits(render_seconds=-1)
    with pytest.raises(DefinitionInvalid) as raised:
        interpolate(values, variables={"env": "prod"}, environ={}, limits=limits)
    assert raised.value.errors == ["s0: interpolation took longer than SERVICE_RENDER_TIMEOUT (-1 s)"]


def test_the_tracer_before_a_render_is_back_after_it_is_stopped() -> None:
    template = SandboxedEnvironment().from_string(LOOPS)
    before = sys.gettrace()
    with pytest.raises(DeadlinePassed), deadline(-1):
        template.render()
    assert sys.gettrace() is before
