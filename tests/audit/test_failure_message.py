"""A failed operation's row names its error code and, beside it, the message its caller was shown."""

from __future__ import annotations

import pytest

from audit.models import AuditEntry
from secretsapi.actions import workspaces, writes
from secretsapi.actions.auditing import MESSAGE_MAX
from secretsapi.service.errors import SecretNotDefined
from tests.factories import Project, definition, file_secret

pytestmark = pytest.mark.django_db


def test_a_failed_row_records_the_message_beside_the_code(project: Project) -> None:
    project.write(definition(file_secret("db")))
    with pytest.raises(SecretNotDefined):
        writes.sync(workspaces.workspace(), actor="t", secret_name="nope")
    row = AuditEntry.objects.get(action="sync")
    assert (row.success, row.details["error"]) == (False, "secret_not_defined")
    assert row.details["message"] == "secret 'nope' is not defined in the definition file"


def test_a_long_message_is_clipped(project: Project) -> None:
    project.write(definition(file_secret("db")))
    with pytest.raises(SecretNotDefined):
        writes.sync(workspaces.workspace(), actor="t", secret_name="x" * 3000)
    assert len(AuditEntry.objects.get(action="sync").details["message"]) == MESSAGE_MAX
