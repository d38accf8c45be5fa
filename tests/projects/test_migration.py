"""An audit log from before projects upgrades: `project` held the definition's `metadata.project`;
after `migrate` that is in `definition_project` and every row that ran on a definition is the
default project's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from audit.models import AuditEntry

BEFORE = [("audit", "0004_context_and_outcome")]

pytestmark = pytest.mark.migrations


@pytest.fixture
def old_schema(transactional_db: None) -> Iterator[MigrationExecutor]:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    executor.loader.build_graph()
    yield executor
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_migrate_moves_metadata_project_aside_and_names_the_default_project(old_schema: MigrationExecutor) -> None:
    Entry = old_schema.loader.project_state(BEFORE).apps.get_model("audit", "AuditEntry")
    now = timezone.now()
    ran = Entry.objects.create(timestamp=now, action="sync", resource="secrets", success=True, details={},
                               definition="/srv/app/Secretfile.yml", project="payments")
    unnamed = Entry.objects.create(timestamp=now, action="sync", resource="secrets", success=True, details={},
                                   definition="/srv/app/Secretfile.yml", project="")
    read = Entry.objects.create(timestamp=now, action="read_audit_logs", resource="audit", success=True, details={})

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    rows = {row.pk: (row.project, row.definition_project) for row in AuditEntry.objects.all()}
    assert rows == {ran.pk: ("default", "payments"), unnamed.pk: ("default", ""), read.pk: ("", "")}
