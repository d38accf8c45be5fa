"""``manage.py webhook``: add, list, enable, disable and remove endpoints; deliver what is due."""

from __future__ import annotations

import json
import sys
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import CommandError

from secretsapi.actions import webhooks as webhook_actions
from secretsapi.management.base import cli_actor, migrate_pending
from secretsapi.management.checks import PagelessCommand
from secretsapi.service.errors import ServiceError
from webhooks.models import EVENTS


class Command(PagelessCommand):
    help = "Manage webhook endpoints and deliver the pending events that are due."

    def add_arguments(self, parser: ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="verb", required=True)
        add = sub.add_parser("add", help="Add an endpoint; prints its id (and its secret when generated).")
        add.add_argument("url")
        add.add_argument("--event", action="append", default=[], choices=EVENTS, dest="events",
                         help="An event to send (repeatable); every event when omitted.")
        add.add_argument("--project", action="append", default=[], dest="projects",
                         help="Only this project's events (repeatable); every project's when omitted.")
        source = add.add_mutually_exclusive_group()
        source.add_argument("--secret-stdin", action="store_true",
                            help="Read the signing secret from standard input (one line).")
        source.add_argument("--secret", help="The signing secret as an argument. Discouraged: arguments are "
                                             "visible to other users (ps) and kept in shell history.")
        listing = sub.add_parser("list", help="List the endpoints (never their secrets).")
        listing.add_argument("--json", action="store_true")
        for verb in ("enable", "disable", "remove"):
            sub.add_parser(verb, help=f"{verb.capitalize()} an endpoint.").add_argument("id", type=int)
        sub.add_parser("deliver", help="Attempt every delivery that is due, once.")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = cli_actor()
        migrate_pending()  # a fresh database, as every engine command
        try:
            getattr(self, f"_{options['verb']}")(options, actor)
        except ServiceError as exc:
            raise CommandError(exc.message) from None

    def _add(self, options: dict[str, Any], actor: str) -> None:
        generated = not (options["secret_stdin"] or options["secret"])
        if options["secret_stdin"]:
            secret = sys.stdin.readline().rstrip("\r\n")
        else:
            secret = options["secret"] or webhook_actions.new_secret()
        endpoint = webhook_actions.add_webhook(options["url"], options["events"], secret, actor=actor,
                                               projects=options["projects"])
        self.stdout.write(f"webhook {endpoint.pk} added for {', '.join(endpoint.events)}")
        if generated:
            self.stdout.write(f"secret (shown once, keep it to verify signatures): {secret}")

    def _list(self, options: dict[str, Any], actor: str) -> None:
        endpoints = webhook_actions.list_webhooks(actor=actor)
        rows = [{"id": e.pk, "url": e.shown_url, "events": e.events, "enabled": e.enabled,
                 "created_at": e.created_at.isoformat(), "projects": e.projects} for e in endpoints]
        if options["json"]:
            self.stdout.write(json.dumps(rows))
            return
        for row in rows:
            state = "enabled" if row["enabled"] else "disabled"
            self.stdout.write(f"{row['id']}\t{state}\t{row['url']}\t{','.join(row['events'])}")

    def _enable(self, options: dict[str, Any], actor: str) -> None:
        webhook_actions.set_webhook_enabled(options["id"], True, actor=actor)
        self.stdout.write(f"webhook {options['id']} enabled")

    def _disable(self, options: dict[str, Any], actor: str) -> None:
        webhook_actions.set_webhook_enabled(options["id"], False, actor=actor)
        self.stdout.write(f"webhook {options['id']} disabled")

    def _remove(self, options: dict[str, Any], actor: str) -> None:
        webhook_actions.remove_webhook(options["id"], actor=actor)
        self.stdout.write(f"webhook {options['id']} removed")

    def _deliver(self, options: dict[str, Any], actor: str) -> None:
        outcome = webhook_actions.deliver_webhooks(actor=actor)
        self.stdout.write(f"delivered {outcome.delivered}, retrying {outcome.retrying}, failed {outcome.failed}")
