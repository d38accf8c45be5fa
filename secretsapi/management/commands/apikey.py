"""``manage.py apikey create|list|revoke|rotate|limit``: named, scoped API keys. A key is printed once.

Like ``serve`` and the engine commands, it migrates a fresh database first; a database error
is one line (``CommandError``, exit 1), never a traceback.
"""

from __future__ import annotations

from argparse import ArgumentParser
from datetime import datetime
from typing import Any

from django.core.management.base import CommandError
from django.db import DatabaseError

from apikeys import keys
from apikeys.models import ApiKey
from apikeys.scopes import SCOPES
from secretsapi.management.base import as_failure, cli_actor, migrate_pending
from secretsapi.management.checks import PagelessCommand


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%dT%H:%MZ") if moment else "-"


class Command(PagelessCommand):
    help = "Create, list, revoke or rotate named API keys (the key itself is printed only at creation)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="verb", required=True)
        create = sub.add_parser("create", help="Create a key and print it once.")
        create.add_argument("name")
        create.add_argument("--scope", action="append", choices=list(SCOPES), required=True,
                            help="A scope the key has; repeat for several.")
        create.add_argument("--expires", help="Lifetime: a number and a unit, s, min, h, d, w, mo or y, "
                                               "e.g. 90d, 12h, 30min (default: never).")
        create.add_argument("--project", action="append", metavar="PROJECT[:ENVIRONMENT]",
                            help="Limit the key to this project (or one environment of it); repeat for several. "
                                 "Default: every project.")
        limit = sub.add_parser("limit", help="Set the projects a key may touch (none given: every project).")
        limit.add_argument("name")
        limit.add_argument("--project", action="append", metavar="PROJECT[:ENVIRONMENT]",
                           help="A project (or one environment of it) the key may touch; repeat for several.")
        sub.add_parser("list", help="Every key, never the key itself.")
        revoke = sub.add_parser("revoke", help="Refuse a key from the next request on.")
        revoke.add_argument("name")
        rotate = sub.add_parser("rotate", help="Print a new key; the old one works for --grace more.")
        rotate.add_argument("name")
        rotate.add_argument("--grace", default="24h",
                            help="How long the old key still works, e.g. 24h, 30min, 0 (default: 24h).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            migrate_pending()
            getattr(self, f"_{options['verb']}")(options)
        except keys.KeyRefused as exc:
            raise CommandError(str(exc)) from None
        except DatabaseError as exc:
            raise CommandError(as_failure(exc).detail) from None

    def _create(self, options: dict[str, Any]) -> None:
        expires = keys.parse_duration(options["expires"]) if options["expires"] else None
        issued = keys.create(options["name"], options["scope"], expires, actor=cli_actor(),
                             projects=keys.parse_projects(options["project"]))
        self.stdout.write(issued.key)
        self.stderr.write(f"Key {issued.name!r} created; it is shown only now: store it.")

    def _list(self, options: dict[str, Any]) -> None:
        self.stdout.write("NAME\tSCOPES\tCREATED\tEXPIRES\tLAST USED\tREVOKED\tPROJECTS")
        for row in ApiKey.objects.order_by("name"):
            self.stdout.write("\t".join((
                row.name, ",".join(row.scopes), _when(row.created), _when(row.expires), _when(row.last_used),
                _when(row.revoked), keys.describe_limits(keys.limits_of(row.projects)),
            )))

    def _limit(self, options: dict[str, Any]) -> None:
        limits = keys.parse_projects(options["project"])
        keys.limit_projects(options["name"], limits, actor=cli_actor())
        self.stdout.write(f"Key {options['name']!r} may touch: {keys.describe_limits(limits)}.")

    def _revoke(self, options: dict[str, Any]) -> None:
        keys.revoke(options["name"], actor=cli_actor())
        self.stdout.write(f"Key {options['name']!r} revoked.")

    def _rotate(self, options: dict[str, Any]) -> None:
        issued = keys.rotate(options["name"], keys.parse_duration(options["grace"], allow_zero=True),
                             actor=cli_actor())
        self.stdout.write(issued.key)
        self.stderr.write(f"Key {issued.name!r} rotated; the old key works until {options['grace']} from now.")
