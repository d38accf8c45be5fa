"""The project a request asked for, as its audit row names it when the request is refused."""

from __future__ import annotations

from typing import Any

from projects import registry
from projects.current import DEFAULT
from projects.errors import ProjectNotFound


def project_asked(view: Any) -> str | None:
    """The project a refused request asked for: its path's, the default one for the spec's own
    paths; None for a path in no project (``/whoami``, ``/projects``) or one that does not exist
    (a name anyone may type is not a project of the audit log). A key refused a project it may
    not touch, or a request whose key was missing or wrong, is recorded in that project's rows,
    which its own keys may read."""
    if view is None or not getattr(view, "project_scoped", False):
        return None
    name = getattr(view, "project_path", None) or DEFAULT
    try:
        return registry.find(name).name
    except ProjectNotFound:
        return None
