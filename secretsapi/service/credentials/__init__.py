"""Credentials changed where they live (database users, IAM access keys), rotated in turns.

``spec`` reads a definition's declaration, ``lifecycle`` runs a rotation's phases on a source
(``databases``, ``iam``), ``recording`` keeps the phase state in the lockfile entries, ``checks``
verifies what targets hold for drift and repair."""

from secretsapi.service.credentials.spec import CONNECTIONS_SETTING, KINDS, is_credential

__all__ = ["CONNECTIONS_SETTING", "KINDS", "is_credential"]
