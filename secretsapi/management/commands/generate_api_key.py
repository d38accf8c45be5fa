"""``manage.py generate_api_key``: print a new key (32 CSPRNG bytes, URL-safe base64)."""

from __future__ import annotations

import base64
import secrets
from typing import Any

from django.core.management.base import BaseCommand

from secretsapi.management.checks import WITHOUT_WEB_CHECKS


def new_api_key() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii")


class Command(BaseCommand):
    help = "Print a new API key; set it as SERVICE_API_KEY and restart the server."
    # It serves no page: Django's checks but the web interface's (secretsapi/management/checks.py).
    requires_system_checks = WITHOUT_WEB_CHECKS

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(new_api_key())
