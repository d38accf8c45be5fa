"""One named API key: its scopes, its dates and the SHA-256 of its secret part (never the key)."""

from __future__ import annotations

from django.db import models


class ApiKey(models.Model):
    name = models.CharField(max_length=100, unique=True)
    scopes = models.JSONField(default=list)
    # SHA-256 hex of the secret part: 32 random bytes need no slow KDF (nothing to brute-force).
    secret_hash = models.CharField(max_length=64)
    created = models.DateTimeField()
    expires = models.DateTimeField(null=True, blank=True)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked = models.DateTimeField(null=True, blank=True)
    # The key a rotation replaced: still accepted until ``previous_until`` (the grace period).
    previous_hash = models.CharField(max_length=64, blank=True, default="")
    previous_until = models.DateTimeField(null=True, blank=True)
    # The projects the key may touch: null, every one (as before projects existed); else project
    # name -> the environments it may use there (an empty list: every one). Any other project
    # answers 404 to it, as one that does not exist.
    projects = models.JSONField(null=True, blank=True, default=None)

    class Meta:
        ordering = ("name",)
        verbose_name = "API key"
        verbose_name_plural = "API keys"

    def __str__(self) -> str:
        return self.name
