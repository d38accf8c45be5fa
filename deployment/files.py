"""The service's private files, made when Django starts (never when the settings are imported)."""

from __future__ import annotations

from django.conf import settings

from deployment.private_data import check_data_folder, check_database, private_sqlite, sqlite_file, tighten


def prepare_private_files() -> None:
    """The data folder loses group and other access; an SQLite database file is created 0600 (with
    its folder, 0700, when missing) so that SQLite's -wal and -shm files are 0600 too. First, what
    is there must be the service's own (deployment/private_data.py): another user's file, or one
    others may write, stops every process here, before anything is read from it."""
    check_data_folder(settings.DATA_DIR)
    tighten(settings.DATA_DIR)
    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        path = sqlite_file(str(database.get("NAME") or ""))
        if path is not None:
            check_database(path)
            private_sqlite(path)
