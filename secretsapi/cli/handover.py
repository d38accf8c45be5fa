"""The hand-over from a subcommand's declaration to its operation: Django is set up here, on the
first subcommand that runs, so ``--help``, ``--version`` and completion start without it."""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any, NoReturn

import click

from secretsapi.cli.program import Lane


def operations() -> ModuleType:
    """The operations, with Django set up (as manage.py sets it up) on first use: 0.4 s of a
    start that ``--help``, ``--version`` and completion do without."""
    import django
    from django.apps import apps

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    if not apps.ready:
        django.setup()
    from secretsapi.cli import operations as loaded

    return loaded


def finish(ctx: click.Context, /, where: Lane, operation: str, **arguments: Any) -> NoReturn:
    """Run ``operation`` of ``secretsapi.cli.operations``, print its report (or its error) and
    exit with its code."""
    ctx.exit(operations().run(where, operation, arguments))
