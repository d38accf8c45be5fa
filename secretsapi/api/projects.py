"""The project a request is in, and whether its key may touch it.

The project is looked up before the key's limit is read, so a project the key may not touch
and one that does not exist cost the same and answer the same 404 (``ProjectNotFound``).
"""

from __future__ import annotations

from rest_framework.request import Request

from projects import registry
from projects.current import DEFAULT, ProjectInfo
from projects.errors import ProjectNotFound
from secretsapi.api.authentication import request_principal


def resolve_project(request: Request, name: str | None) -> tuple[ProjectInfo | None, tuple[str, ...]]:
    """The path's project (None for the spec's own paths: the default one) and the environments
    the key may use in it (empty: every one); ProjectNotFound if it may not touch it."""
    wanted = name if name is not None else DEFAULT
    found = registry.find(wanted) if name is not None else None
    principal = request_principal(request)
    limits = principal.projects if principal is not None else None
    if limits is not None and wanted not in limits:
        raise ProjectNotFound(wanted)
    return found, (limits or {}).get(wanted, ())


def path_prefix() -> str:
    """``/projects/{name}`` in a named project's request, else empty (addresses the answer gives)."""
    from projects import current

    return f"/projects/{current.name()}" if current.explicit() else ""


def scraped_projects(request: Request) -> list[ProjectInfo] | None:
    """The projects ``GET /metrics`` shows: the path's; else, for a key limited to projects, those
    of them that exist; else None, every project."""
    from projects import current

    if current.explicit():
        return [current.get()]
    principal = request_principal(request)
    limits = principal.projects if principal is not None else None
    if limits is None:
        return None
    return [project for project in registry.all_projects() if project.name in limits]


def listing_project(request: Request, asked: str | None) -> str | None:
    """The project a listing (jobs, audit rows) is confined to: the path's; else ``?project=``;
    else, for a key limited to projects, the default one (its unprefixed paths' project); else
    None, every project. A ``?project=`` the key may not touch is a 404, as an unknown one."""
    from projects import current

    if current.explicit():
        return current.name()
    principal = request_principal(request)
    limits = principal.projects if principal is not None else None
    if asked is not None:
        if limits is not None and asked not in limits:
            raise ProjectNotFound(asked)
        return asked
    return DEFAULT if limits is not None else None
