"""Adding, finding and removing projects: the only writer of ``Project`` rows, each change audited.

A project's name is a slug (lower-case letters, digits and ``-``, at most 63, as a DNS label),
``default`` reserved for SERVICE_CONFIG's. Its definition path is the operator's choice alone
(the command line, an ``admin`` key): absolute, an existing regular file, outside the service's
data folder and database (the same rule the engine applies to a definition's own paths), and
served by no other project, so no two projects share a lockfile. Removing a project removes its
row, never a file: its definition, lockfile and targets stay where they are.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction

from audit.recorder import record
from projects.current import DEFAULT, ProjectInfo, default_project
from projects.errors import ProjectExists, ProjectNotFound, ProjectRefused
from projects.models import Project

NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
NAME_RULE = "lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63"
PATH_MAX = 1024


def _info(row: Project) -> ProjectInfo:
    return ProjectInfo(row.name, Path(row.definition), row.created)


def all_projects() -> list[ProjectInfo]:
    """The default project first, then every added one by name."""
    return [default_project(), *(_info(row) for row in Project.objects.order_by("name"))]


def project_names() -> list[str]:
    """``default`` first, then every added project's name (the scheduler's round)."""
    return [DEFAULT, *Project.objects.order_by("name").values_list("name", flat=True)]


def serving(definition: Path) -> ProjectInfo | None:
    """The added project ``definition`` is the definition of (the same file, however its path is
    spelled or linked), or None: a command line run on it audits as that project's."""
    real = Path(os.path.realpath(definition))
    for row in Project.objects.order_by("name"):
        if Path(os.path.realpath(row.definition)) == real:
            return _info(row)
    return None


def find(name: str) -> ProjectInfo:
    """The project named ``name`` (read from the database each time: no restart after a change)."""
    if name == DEFAULT:
        return default_project()
    row = Project.objects.filter(name=name).first() if NAME.match(name) else None
    if row is None:
        raise ProjectNotFound(name)
    return _info(row)


def check_name(name: str) -> None:
    if not isinstance(name, str) or not NAME.match(name):
        raise ProjectRefused(f"Invalid project name {name!r}: {NAME_RULE} (project_refused).")
    if name == DEFAULT:
        raise ProjectRefused(f"The name {DEFAULT!r} is reserved: it is the project SERVICE_CONFIG names "
                             "(project_refused).")


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _service_files() -> list[Path]:
    database = settings.DATABASES["default"]
    files = [Path(os.path.realpath(settings.DATA_DIR))]
    if database["ENGINE"] == "django.db.backends.sqlite3" and str(database["NAME"]) != ":memory:":
        files.append(Path(os.path.realpath(str(database["NAME"]))))
    return files


def check_definition(path: str) -> Path:
    """``path`` as a project's definition, or ProjectRefused naming the rule it breaks."""
    if not isinstance(path, str) or not path or "\x00" in path or len(path) > PATH_MAX:
        raise ProjectRefused(f"A definition path is a file's absolute path of at most {PATH_MAX} characters "
                             "(project_refused).")
    if not os.path.isabs(path):
        raise ProjectRefused(f"The definition path {path!r} is not absolute: name the file from / "
                             "(project_refused).")
    given = Path(os.path.normpath(path))
    real = Path(os.path.realpath(given))
    for own in _service_files():
        if _inside(real, own):
            raise ProjectRefused(f"The definition path {path!r} is in the service's own files ({own}): a "
                                 "definition lives with its project, never in SERVICE_DATA_DIR (project_refused).")
    try:
        info = os.stat(real)
    except OSError:
        raise ProjectRefused(f"No definition file at {path!r} (project_refused).") from None
    if not stat.S_ISREG(info.st_mode):
        raise ProjectRefused(f"The definition path {path!r} is not a regular file (project_refused).")
    served = [default_project(), *(_info(row) for row in Project.objects.all())]
    for project in served:
        if Path(os.path.realpath(project.definition)) == real:
            raise ProjectRefused(f"The definition {path!r} is served already, by the project {project.name!r}: "
                                 "two projects would share one lockfile (project_refused).")
    return given


def add(name: str, definition: str, *, actor: str | None) -> ProjectInfo:
    """A new project, served from the next request on, on every instance."""
    check_name(name)
    if Project.objects.filter(name=name).exists():
        raise ProjectExists(f"A project named {name!r} exists already (project_exists).")
    path = check_definition(definition)
    try:
        with transaction.atomic():
            row = Project.objects.create(name=name, definition=str(path))
    except IntegrityError:  # another instance added it between the check and the insert
        raise ProjectExists(f"A project named {name!r} exists already (project_exists).") from None
    record(action="project_add", resource=f"project:{name}", user=actor, success=True,
           details={"name": name, "definition": str(path)}, context={"project": name})
    return _info(row)


def remove(name: str, *, actor: str | None) -> None:
    """The project's row removed; its files stay (a removed project's lockfile is still its own)."""
    if name == DEFAULT:
        raise ProjectRefused(f"The {DEFAULT!r} project is SERVICE_CONFIG's: it cannot be removed (project_refused).")
    deleted, _ = Project.objects.filter(name=name).delete() if NAME.match(name) else (0, {})
    if not deleted:
        raise ProjectNotFound(name)
    record(action="project_remove", resource=f"project:{name}", user=actor, success=True,
           details={"name": name}, context={"project": name})
