"""``manage.py changepassword``: Django's command, its success an audit row (``admin_user_password``)."""

from __future__ import annotations

import getpass
from typing import Any

from django.contrib.auth.management.commands import changepassword

from adminusers import audit
from secretsapi.management.base import cli_actor


class Command(changepassword.Command):
    def handle(self, *args: Any, **options: Any) -> Any:
        # Django's command raises CommandError for an unknown user or after three mismatches.
        result = super().handle(*args, **options)
        username = options.get("username") or getpass.getuser()
        audit.account_changed(audit.PASSWORD, str(username), actor=cli_actor(), via="changepassword")
        return result
