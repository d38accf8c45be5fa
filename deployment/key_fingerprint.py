"""One SECRET_KEY per database: a second host that generated its own key is refused at start.

Every instance and worker sharing a database must sign with the same key (admin sessions, the
job queue's entries). A key generated into each host's data folder differs per host, which
otherwise shows only later, as admin logins that do not hold and jobs a worker refuses. So the
first ``serve`` or ``worker`` on a database records a fingerprint of its key, and every later
start compares its own.
"""

from __future__ import annotations

import hmac
import socket

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from deployment.models import SecretKeyFingerprint

_SALT = "deployment.key_fingerprint"


class SecretKeyMismatch(Exception):
    """This process's SECRET_KEY is not the database's."""


def fingerprint(key: str) -> str:
    """HMAC-SHA256 of a fixed text under ``key``: equal keys, equal fingerprints; the key stays unknown."""
    return salted_hmac(_SALT, "secret key fingerprint", secret=key, algorithm="sha256").hexdigest()


def verify_secret_key() -> None:
    """Record this key's fingerprint if the database has none; else raise SecretKeyMismatch
    unless it is the recorded one (or the recorded one is among SECRET_KEY_FALLBACKS: the key was
    rotated, and the new one is recorded)."""
    mine = fingerprint(str(settings.SECRET_KEY))
    try:
        with transaction.atomic():
            recorded, created = SecretKeyFingerprint.objects.get_or_create(
                pk=1, defaults={"fingerprint": mine, "host": socket.gethostname(), "recorded_at": timezone.now()})
    except IntegrityError:  # another process recorded its key at the same moment
        recorded, created = SecretKeyFingerprint.objects.get(pk=1), False
    if created or hmac.compare_digest(recorded.fingerprint, mine):
        return
    if any(hmac.compare_digest(recorded.fingerprint, fingerprint(str(old))) for old in settings.SECRET_KEY_FALLBACKS):
        record_secret_key()
        return
    raise SecretKeyMismatch(
        f"This host's SECRET_KEY is not the one this database was first started with (on {recorded.host}, "
        f"{recorded.recorded_at:%Y-%m-%d %H:%M} UTC). Every instance and worker sharing a database must use one "
        "key: give this host that key (SERVICE_SECRET_KEY or SERVICE_SECRET_KEY_FILE; a generated key is the file "
        "secret_key in the first host's data folder). To replace the key on purpose, run `manage.py "
        "accept_secret_key` with the new one, then restart every instance and worker with it."
    )


def record_secret_key() -> None:
    """Make this process's key the database's (a deliberate change of key)."""
    SecretKeyFingerprint.objects.update_or_create(
        pk=1, defaults={"fingerprint": fingerprint(str(settings.SECRET_KEY)), "host": socket.gethostname(),
                        "recorded_at": timezone.now()})
