"""``manage.py project add NAME PATH | list | remove NAME``: the projects the service serves.

A change holds from the next request on, on every instance (no restart). Like ``apikey``, it
migrates a fresh database first; a refusal or a database error is one line (exit 1).
"""

from __future__ import annotations

import json
import os
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import CommandError
from django.db import DatabaseError

from projects import registry
from projects.current import ProjectInfo
from projects.errors import ProjectNotFound, ProjectRefused
from secretsapi.management.base import as_failure, cli_actor, migrate_pending
from secretsapi.management.checks import PagelessCommand


def as_data(project: ProjectInfo) -> dict[str, Any]:
    return {"name": project.name, "definition": str(project.definition), "default": project.is_default,
            "created": project.created.isoformat() if project.created else None}


class Command(PagelessCommand):
    help = "Add, list or remove the projects this service serves (the default one is SERVICE_CONFIG's)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="verb", required=True)
        add = sub.add_parser("add", help="Serve a definition as a project, under /projects/NAME/.")
        add.add_argument("name", help=f"The project's name: {registry.NAME_RULE}.")
        add.add_argument("path", help="Its definition file (relative: to the current folder).")
        listing = sub.add_parser("list", help="Every project, the default one first.")
        listing.add_argument("--json", action="store_true", help="One JSON document.")
        remove = sub.add_parser("remove", help="Stop serving a project; its files stay where they are.")
        remove.add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            migrate_pending()
            getattr(self, f"_{options['verb']}")(options)
        except (ProjectRefused, ProjectNotFound) as exc:
            raise CommandError(exc.message) from None
        except DatabaseError as exc:
            raise CommandError(as_failure(exc).detail) from None

    def _add(self, options: dict[str, Any]) -> None:
        project = registry.add(options["name"], os.path.abspath(options["path"]), actor=cli_actor())
        self.stdout.write(f"Project {project.name!r} added: {project.definition}")

    def _list(self, options: dict[str, Any]) -> None:
        projects = registry.all_projects()
        if options["json"]:
            self.stdout.write(json.dumps({"projects": [as_data(p) for p in projects], "count": len(projects)}))
            return
        self.stdout.write("NAME\tDEFINITION\tCREATED")
        for p in projects:
            self.stdout.write(f"{p.name}\t{p.definition}\t{p.created.isoformat() if p.created else '-'}")

    def _remove(self, options: dict[str, Any]) -> None:
        registry.remove(options["name"], actor=cli_actor())
        self.stdout.write(f"Project {options['name']!r} removed; its files are untouched.")
