"""The hand-over from a subcommand's declaration to its operation: Django is set up here, on the
first subcommand that runs, so ``--help``, ``--version`` and completion start without it."""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any, NoReturn

import click

from secretsapi.cli.program import Lane
from secretsapi.cli.remote import address


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
    exit with its code. With an address (``--addr``, SECRETSCTL_ADDR) the service runs it, and
    Django is not set up here at all."""
    remote = address.of(ctx)
    if remote is not None:
        from secretsapi.cli.remote import operations as remote_operations

        warn_plain_http(remote)
        ctx.exit(remote_operations.run(remote, where, operation, arguments))
    ctx.exit(operations().run(where, operation, arguments))


def warn_plain_http(remote: address.Remote) -> None:
    if remote.plain_http_elsewhere():
        click.echo(f"Warning: {remote.addr} is plain http:// to another machine: the API key and every "
                   "answer cross the network unencrypted; use https://", err=True)
