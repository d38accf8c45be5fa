"""``manage.py status`` of every secret is one audit row naming the count; one secret's keeps its own."""

from __future__ import annotations

import contextlib
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry, AuditMention
from tests.factories import Project, definition, file_secret

pytestmark = pytest.mark.django_db


@pytest.fixture
def synced(project: Project) -> Project:
    project.write(definition(*(file_secret(f"s{i}", f"out/{i}.env") for i in range(5))))
    call_command("sync", stdout=StringIO())
    project.write(definition(*(file_secret(f"s{i}", f"out/{i}.env") for i in range(6))))  # s5 never synced
    AuditEntry.objects.all().delete()
    return project


def status(*args: str) -> None:
    with contextlib.suppress(CommandError):  # exit 2: s5 is not generated
        call_command("status", *args, stdout=StringIO())


def test_status_of_every_secret_writes_exactly_one_row_naming_the_count(synced: Project) -> None:
    status()
    row = AuditEntry.objects.get()
    assert (row.action, row.resource, row.success) == ("get_secrets_status", "secrets", True)
    assert (row.details["count"], row.details["missing"]) == (6, 1)


def test_the_bulk_row_mentions_no_secret_since_it_read_no_value(synced: Project) -> None:
    # 20,000 mentions a run cost more than the status itself; ``?secret=`` finds the operations
    # on a secret and the status of that one secret.
    status()
    assert not AuditMention.objects.filter(entry=AuditEntry.objects.get()).exists()


def test_the_status_of_one_secret_is_found_by_its_name(synced: Project) -> None:
    status("s2")
    assert list(AuditMention.objects.values_list("secret", flat=True)) == ["s2"]


def test_the_bulk_row_keeps_the_names_out_of_its_details(synced: Project) -> None:
    status()
    assert "s3" not in str(AuditEntry.objects.get().details)


def test_status_of_one_secret_keeps_its_own_row(synced: Project) -> None:
    status("s2")
    row = AuditEntry.objects.get()
    assert (row.action, row.resource, row.details["exists"]) == ("get_secret_status", "secret:s2", True)
