"""``manage.py sync``: generate missing secrets (or all, with --force) and store them."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi import actions
from secretsapi.management.base import EngineCommand, cli_actor


class Command(EngineCommand):
    help = "Generate secrets that do not exist yet and write them to their targets."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--dry-run", action="store_true", help="Show what would be generated; write nothing.")
        parser.add_argument("--force", action="store_true", help="Regenerate existing secrets too.")
        parser.add_argument("--repair", action="store_true",
                            help="Also put recorded values back into targets that hold another value "
                                 "(a plain sync completes missing and new targets).")
        parser.add_argument("--refresh", action="store_true",
                            help="First drop recorded target ids the definition no longer names.")
        parser.add_argument("--secret", dest="secret_name", help="Sync only this secret.")
        parser.add_argument("--var-file", action="append", default=[], dest="var_files",
                            help="Variable file relative to the definition's folder (repeatable).")

    def handle(self, *args: Any, **options: Any) -> None:
        result = actions.sync(
            self.workspace(options, options["var_files"]), actor=cli_actor(),
            dry_run=options["dry_run"], force=options["force"], secret_name=options["secret_name"],
            repair=options["repair"], refresh=options["refresh"],
        )
        # Errors first: in a long run they must not scroll away behind the per-secret lines.
        lines = [result.message]
        lines += [f"  error      {e.secret} [{e.target or '-'}]: {e.message}" for e in result.errors]
        lines += [f"  generated  {name}" for name in result.secrets_generated]
        lines += [f"  repaired   {name}" for name in result.secrets_repaired]
        lines += [f"  skipped    {name}" for name in result.secrets_skipped]
        lines += [f"  refreshed  {key}: dropped {', '.join(ids)}" for key, ids in result.refreshed.items()]
        self.emit(options, result, "\n".join(lines))
        if result.errors:
            raise self.failure(f"{len(result.errors)} error(s) during sync")
