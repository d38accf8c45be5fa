"""``manage.py policy``: check the policies (exit 2 when not compliant)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi.actions import checks
from secretsapi.management import reports
from secretsapi.management.base import EngineCommand, add_var_file_option, cli_actor


class Command(EngineCommand):
    help = "Check rotation, access and compliance policies; exit 2 when not compliant."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        add_var_file_option(parser)
        parser.add_argument("--fail-on-warning", action="store_true", help="Warnings make it non-compliant.")

    def handle(self, *args: Any, **options: Any) -> None:
        result = checks.check_policy(
            self.workspace(options), actor=cli_actor(), fail_on_warning=options["fail_on_warning"]
        )
        self.report(options, reports.policy_report(result))
