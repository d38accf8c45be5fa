"""``manage.py accept_secret_key``: make this host's SECRET_KEY the one the database expects."""

from __future__ import annotations

from typing import Any

from deployment.key_fingerprint import record_secret_key
from secretsapi.management.base import migrate_pending
from secretsapi.management.checks import PagelessCommand


class Command(PagelessCommand):
    help = ("Record this host's SECRET_KEY as the database's, after replacing the key on purpose: instances and "
            "workers with the old key are then refused at start. Admin sessions signed with the old key end.")

    def handle(self, *args: Any, **options: Any) -> None:
        migrate_pending()
        record_secret_key()
        self.stdout.write("This host's secret key is now the database's: restart every instance and worker with it.")
