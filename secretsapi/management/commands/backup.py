"""``manage.py backup FILE``: the database, the data folder and the definition's folder in one file."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from deployment.archive import ArchiveError
from deployment.backups import backup
from secretsapi.management.base import cli_actor, migrate_pending
from secretsapi.management.checks import PagelessCommand


class Command(PagelessCommand):
    help = ("Back up the database, the data folder (its secret key) and the definition's folder (lockfiles, local "
            "targets; SERVICE_LOCKFILE and SERVICE_TARGET_ROOTS too) into FILE, a new tar.gz written 0600. It holds "
            "secrets: keep it as you keep them. `manage.py restore FILE` restores it into an empty install.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", type=Path, help="The backup to write (must not exist).")

    def handle(self, *args: Any, **options: Any) -> None:
        migrate_pending()
        try:
            summary = backup(options["file"], actor=cli_actor())
        except ArchiveError as exc:
            raise CommandError(str(exc)) from None
        files = ", ".join(f"{count} of {role}" for role, count in summary.files.items()) or "no files"
        self.stdout.write(f"Backed up the {summary.database} database and {files} to {options['file']} (mode 0600).")
        for link in summary.links_skipped:
            self.stderr.write(f"skipped the symbolic link {link} (links are not followed nor kept)")
