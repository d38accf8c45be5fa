"""One project the operator added: a name and the definition it serves (the default one,
SERVICE_CONFIG's, is no row: it always exists and cannot be removed)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class Project(models.Model):
    name = models.CharField(max_length=63, unique=True)
    # An absolute path, chosen by the operator only (``manage.py project add``, an admin-scoped key):
    # its lockfiles, environments, var files and target roots are what the definition says.
    definition = models.CharField(max_length=1024)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name
