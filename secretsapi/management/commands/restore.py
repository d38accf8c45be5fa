"""``manage.py restore FILE``: a backup into an empty install (database, data folder, definition's folder)."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from deployment.archive import ArchiveError
from deployment.backups import restore
from secretsapi.management.base import cli_actor, migrate_pending
from secretsapi.management.checks import PagelessCommand


class Command(PagelessCommand):
    help = ("Restore a backup made by `manage.py backup` into this install, which must be empty (a new database); "
            "files go where this install's settings say. Stop serve and worker first.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", type=Path, help="The backup to restore.")

    def handle(self, *args: Any, **options: Any) -> None:
        migrate_pending()
        try:
            summary = restore(options["file"], actor=cli_actor())
        except ArchiveError as exc:
            raise CommandError(str(exc)) from None
        files = ", ".join(f"{count} of {role}" for role, count in summary.files.items()) or "no files"
        self.stdout.write(f"Restored the {summary.database} database and {files} from {options['file']}.")
