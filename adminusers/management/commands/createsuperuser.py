"""``manage.py createsuperuser`` refusing the names the audit log reserves (``service``, ``cli:*``...).

Django's own command, through its documented extension points: ``get_input_data`` for the
prompt, and a check of ``--username`` (or ``DJANGO_SUPERUSER_USERNAME``) before it runs. This
app is listed before ``django.contrib.auth`` so that this command is the one Django finds.
"""

from __future__ import annotations

import os
from typing import Any

from django.contrib.auth.management.commands import createsuperuser
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from adminusers import audit
from adminusers.names import check_username
from secretsapi.management.base import cli_actor


class Command(createsuperuser.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        field_name = self.username_field.name
        username = options.get(field_name)
        if username is None and not options.get("interactive"):
            username = os.environ.get(f"DJANGO_SUPERUSER_{field_name.upper()}")
        if username:
            try:
                check_username(username)
            except ValidationError as exc:
                raise CommandError("; ".join(exc.messages)) from None
        self._username = username
        super().handle(*args, **options)
        # Django's command returns only once the account exists (an error raised before).
        if self._username:
            audit.account_changed(audit.CREATE, str(self._username), actor=cli_actor(), via="createsuperuser",
                                  staff=True, superuser=True)

    def get_input_data(self, field: Any, message: str, default: Any = None) -> Any:
        value = super().get_input_data(field, message, default)
        if field is self.username_field and value:
            try:
                check_username(value)
            except ValidationError as exc:
                self.stderr.write("Error: " + "; ".join(exc.messages))
                return None
            self._username = value
        return value
