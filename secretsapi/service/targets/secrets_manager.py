"""``aws/secrets_manager``: a secret as the string of one AWS Secrets Manager secret."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from secretsapi.service.targets.aws import NamedEntryKind, client_error, error_code
from secretsapi.service.targets.schema import KindSchema, Setting
from secretsapi.service.util.hashing import sha256_text


class SecretsManagerKind(NamedEntryKind):
    schema = KindSchema(
        "aws/secrets_manager",
        "An AWS Secrets Manager secret (SecretString): created on first write, then each write puts a new "
        "version (AWSCURRENT). A secret scheduled for deletion is restored first.",
        {
            "name": Setting("string", "secret name (or ARN of an existing secret)", required=True),
            "description": Setting("string", "description, set when the secret is created"),
            "kms_key_id": Setting("string", "KMS key, set when the secret is created; the account's default "
                                            "key when unset"),
        },
        target_id="`<alias>/secrets_manager/<name>`",
        example={'name': 'app/db_password'}
    )
    service = "secretsmanager"
    agreed = ("description", "kms_key_id")

    def store(self, client: Any, config: Mapping[str, Any], value: str, where: str) -> None:
        name = str(config["name"])
        create: dict[str, Any] = {"Name": name, "SecretString": value}
        if config.get("description"):
            create["Description"] = config["description"]
        if config.get("kms_key_id"):
            create["KmsKeyId"] = config["kms_key_id"]
        try:
            client.create_secret(**create)
        except Exception as exc:
            if error_code(exc) != "ResourceExistsException":
                raise client_error(exc, where, "create_secret") from None
            self._put(client, name, value, where)

    @staticmethod
    def _put(client: Any, name: str, value: str, where: str) -> None:
        """A new version of an existing secret, restoring it first if scheduled for deletion."""
        operation = "describe_secret"
        try:
            if "DeletedDate" in client.describe_secret(SecretId=name):
                operation = "restore_secret"
                client.restore_secret(SecretId=name)
            operation = "put_secret_value"
            client.put_secret_value(SecretId=name, SecretString=value)
        except Exception as exc:
            raise client_error(exc, where, operation) from None

    def fetch(self, client: Any, name: str, where: str) -> tuple[str, str | None] | None:
        try:
            response = client.get_secret_value(SecretId=name)
        except Exception as exc:
            # InvalidRequestException: scheduled for deletion, which is gone for its readers.
            if error_code(exc) in ("ResourceNotFoundException", "InvalidRequestException"):
                return None
            raise client_error(exc, where, "get_secret_value") from None
        stored = response.get("SecretString")
        if isinstance(stored, str):
            return sha256_text(stored), stored
        # A binary secret: hashed as stored, never a value this service wrote or can reuse.
        return hashlib.sha256(response.get("SecretBinary") or b"").hexdigest(), None


KINDS = (SecretsManagerKind(),)
