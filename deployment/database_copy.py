"""The database in a backup: SQLite's own online backup, or Django's fixture for PostgreSQL.

SQLite: the online backup API copies the live database page by page into a new file, consistent
while writers go on (WAL), schema and migration state included; a restore copies it back the
same way into the (empty) database, so SQLite's locks and journals are respected.

PostgreSQL (and any other server): ``dumpdata`` in one REPEATABLE READ, READ ONLY transaction
(one consistent snapshot), with natural keys, without the content types and permissions that
``migrate`` makes. Chosen over pg_dump: it needs no client tools matching the server's version
(the image has none), restores onto any database Django supports, and goes through the same
models the service runs; pg_dump remains the tool for very large audit logs (docs/operations.md).
A restore first brings the empty database to the backup's migrations, loads the fixture (which
resets PostgreSQL's sequences), then migrates forward.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path

from django.apps import apps
from django.core.management import call_command
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

# Rows the service writes on its own when it first starts (the secret key's fingerprint, the
# schedules a worker installs: jobs.Schedule since the move from django-q2, whose
# ``django_q.schedule`` model no longer exists): an install that holds only these is empty, and a
# restore replaces them with the backup's.
START_UP_MODELS = ("deployment.secretkeyfingerprint", "jobs.schedule")
# Made by `migrate` itself, never backed up.
MIGRATE_MODELS = ("contenttypes.contenttype", "auth.permission")
EXCLUDED_FROM_FIXTURE = ("contenttypes", "auth.permission")


def vendor(alias: str = DEFAULT_DB_ALIAS) -> str:
    return str(connections[alias].vendor)


def sqlite_path(alias: str = DEFAULT_DB_ALIAS) -> Path:
    return Path(str(connections[alias].settings_dict["NAME"]))


def applied_migrations(alias: str = DEFAULT_DB_ALIAS) -> list[list[str]]:
    return sorted([app, name] for app, name in MigrationRecorder(connections[alias]).applied_migrations())


def rows_held(alias: str = DEFAULT_DB_ALIAS) -> dict[str, int]:
    """Rows per model, of the models an empty install has none of."""
    ignored = {*START_UP_MODELS, *MIGRATE_MODELS}
    tables = set(connections[alias].introspection.table_names())
    counts = {}
    for model in apps.get_models():
        if model._meta.label_lower in ignored or model._meta.db_table not in tables or not model._meta.managed:
            continue
        count = model._default_manager.using(alias).count()
        if count:
            counts[model._meta.label_lower] = count
    return counts


def copy_sqlite(destination: Path, alias: str = DEFAULT_DB_ALIAS) -> None:
    """The live SQLite database into the new file ``destination`` (SQLite's online backup)."""
    source = sqlite3.connect(sqlite_path(alias))
    target = sqlite3.connect(destination)
    try:
        with target:
            source.backup(target)
    finally:
        target.close()
        source.close()


def dump_fixture(destination: Path, alias: str = DEFAULT_DB_ALIAS) -> None:
    """Every row but the content types and permissions, as a JSON fixture, from one snapshot."""
    with transaction.atomic(using=alias):
        if vendor(alias) == "postgresql":
            with connections[alias].cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        call_command("dumpdata", database=alias, natural_foreign=True, natural_primary=True,
                     exclude=list(EXCLUDED_FROM_FIXTURE), output=str(destination), verbosity=0)


def restore_sqlite(source: Path, alias: str = DEFAULT_DB_ALIAS) -> None:
    """The backup's database copied over the (empty) live one, through SQLite's backup API."""
    connections[alias].close()
    backup = sqlite3.connect(source)
    live = sqlite3.connect(sqlite_path(alias))
    try:
        with live:
            backup.backup(live)
    finally:
        live.close()
        backup.close()


def load_fixture(fixture: Path, migrations: list[list[str]], alias: str = DEFAULT_DB_ALIAS) -> None:
    """The empty database at the backup's migrations, the start-up rows cleared, the fixture loaded."""
    recorded: dict[str, list[str]] = defaultdict(list)
    for app, name in migrations:
        recorded[app].append(name)
    loader = MigrationLoader(connections[alias])
    for app in sorted(loader.migrated_apps):
        target = max(recorded[app]) if recorded.get(app) else "zero"
        call_command("migrate", app, target, database=alias, interactive=False, verbosity=0)
    tables = set(connections[alias].introspection.table_names())
    with transaction.atomic(using=alias):
        for label in START_UP_MODELS:
            model = apps.get_model(label)
            if model._meta.db_table in tables:
                model._default_manager.using(alias).all().delete()
        call_command("loaddata", str(fixture), database=alias, verbosity=0)
