"""The project the running request or job is in: its definition and lockfile for the actions.

Set by the API for a ``/projects/{name}/...`` request and by a job's worker for the job's
project; anything else (the spec's own paths, the commands) runs in the default project,
SERVICE_CONFIG's definition and SERVICE_LOCKFILE.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.conf import settings

DEFAULT = "default"


@dataclass(frozen=True)
class ProjectInfo:
    name: str
    definition: Path
    created: datetime | None = None

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT

    @property
    def lockfile(self) -> Path | None:
        """The default project's SERVICE_LOCKFILE; any other's, its definition's own lockfile."""
        return settings.SERVICE_LOCKFILE if self.is_default else None


_current: ContextVar[ProjectInfo | None] = ContextVar("project", default=None)
# The environments the caller's key may use in the project (empty: every one).
_environments: ContextVar[tuple[str, ...]] = ContextVar("project_environments", default=())


def default_project() -> ProjectInfo:
    """The default project as the settings say now (read at each call: tests override them)."""
    return ProjectInfo(DEFAULT, Path(settings.SERVICE_CONFIG))


def get() -> ProjectInfo:
    return _current.get() or default_project()


def name() -> str:
    found = _current.get()
    return DEFAULT if found is None else found.name


def explicit() -> bool:
    """Whether a project was named (a ``/projects/{name}/`` path or a job's), not assumed."""
    return _current.get() is not None


def environments() -> tuple[str, ...]:
    return _environments.get()


@contextmanager
def using(project: ProjectInfo | None, allowed_environments: tuple[str, ...] = ()) -> Iterator[None]:
    token = _current.set(project)
    limit = _environments.set(tuple(allowed_environments))
    try:
        yield
    finally:
        _environments.reset(limit)
        _current.reset(token)


def enter(project: ProjectInfo | None, allowed_environments: tuple[str, ...] = ()) -> None:
    """Set for the rest of the enclosing ``using`` block (a view's, once its key is known)."""
    _current.set(project)
    _environments.set(tuple(allowed_environments))
