"""``manage.py generate_api_key``: print a new key (32 CSPRNG bytes, URL-safe base64)."""

from __future__ import annotations

import base64
import secrets
from typing import Any

from secretsapi.management.checks import PagelessCommand


def new_api_key() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii")


class Command(PagelessCommand):
    help = "Print a new API key; set it as SERVICE_API_KEY and restart the server."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(new_api_key())
