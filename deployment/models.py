"""The secret key this database was first started with, as a fingerprint (never the key)."""

from __future__ import annotations

from django.db import models


class SecretKeyFingerprint(models.Model):
    """One row: an HMAC of a fixed text under the SECRET_KEY the first ``serve`` or ``worker``
    started with, the host it ran on and when. It tells whether another key is the same one,
    and nothing about the key."""

    fingerprint = models.CharField(max_length=64)
    host = models.CharField(max_length=255)
    recorded_at = models.DateTimeField()

    class Meta:
        verbose_name = "secret key fingerprint"

    def __str__(self) -> str:
        return f"{self.fingerprint[:12]}... (first on {self.host})"
