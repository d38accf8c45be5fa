"""The IAM source: an IAM user's two access keys take turns (IAM allows two per user).

A rotation creates a key (first deleting a key that is neither current nor allowed to stay when
the user already has two), verifies it with ``sts:GetCallerIdentity``, and the previous key is
deactivated once its grace is over, then deleted by the next rotation that needs its place.

The connection is ``aws://[ACCESS_KEY_ID:SECRET_KEY@]REGION[?endpoint_url=URL]``: without keys,
the server's own AWS credentials (boto3's chain); ``endpoint_url`` for an IAM-compatible peer.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from secretsapi.service.errors import GeneratorError

# IAM is eventually consistent: a new key may be refused by STS for a few seconds.
VERIFY_TRIES = 6
VERIFY_PAUSE = 2.0
# STS refusing the key itself; anything else (throttling, the endpoint unreachable) says nothing of it.
REFUSED_CODES = frozenset({"InvalidClientTokenId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken"})


class IamSource:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        self._region = parts.hostname or "us-east-1"
        self._endpoint = query.get("endpoint_url", [None])[0]
        self._keys = (unquote(parts.username), unquote(parts.password or "")) if parts.username else None

    def _client(self, service: str, keys: tuple[str, str] | None = None) -> Any:
        try:
            import boto3
        except ImportError:  # an optional SDK (make cloud), as for the aws/* targets
            raise GeneratorError("install the 'boto3' package (make cloud) to use aws_iam_key") from None

        given = keys or self._keys
        credentials = {"aws_access_key_id": given[0], "aws_secret_access_key": given[1]} if given else {}
        return boto3.session.Session(**credentials).client(
            service, region_name=self._region, endpoint_url=self._endpoint)

    def issue(self, slot: str | None, user: str, length: int, keep: str | None = None) -> tuple[str, str]:
        BotoCoreError, ClientError = _sdk_errors()  # the SDK is optional (make cloud)
        try:
            iam = self._client("iam")
            keys = iam.list_access_keys(UserName=user)["AccessKeyMetadata"]
            if len(keys) >= 2:
                for key in keys:
                    if key["AccessKeyId"] != keep:
                        iam.delete_access_key(UserName=user, AccessKeyId=key["AccessKeyId"])
            made = iam.create_access_key(UserName=user)["AccessKey"]
        except (BotoCoreError, ClientError) as exc:
            raise GeneratorError(f"IAM: {_reason(exc)}") from None
        value = json.dumps({"access_key_id": made["AccessKeyId"], "secret_access_key": made["SecretAccessKey"]},
                           separators=(",", ":"), sort_keys=True)
        return value, str(made["AccessKeyId"])

    def verify(self, value: str, *, fresh: bool = False) -> bool:
        BotoCoreError, ClientError = _sdk_errors()  # the SDK is optional (make cloud)
        try:
            parsed = json.loads(value)
            keys = (str(parsed["access_key_id"]), str(parsed["secret_access_key"]))
        except (ValueError, KeyError, TypeError):
            return False
        tries = VERIFY_TRIES if fresh else 1
        for attempt in range(tries):
            try:
                self._client("sts", keys).get_caller_identity()
                return True
            except ClientError as exc:
                if _reason(exc) not in REFUSED_CODES:
                    raise GeneratorError(f"IAM: cannot check the key: {_reason(exc)}") from None
            except BotoCoreError as exc:
                raise GeneratorError(f"IAM: cannot check the key: {_reason(exc)}") from None
            if attempt + 1 < tries:
                time.sleep(VERIFY_PAUSE)
        return False

    def retire(self, user: str, slot: str) -> None:
        BotoCoreError, ClientError = _sdk_errors()  # the SDK is optional (make cloud)
        try:
            self._client("iam").update_access_key(UserName=user, AccessKeyId=slot, Status="Inactive")
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "NoSuchEntity":  # deleted already: retired
                raise GeneratorError(f"IAM: {_reason(exc)}") from None
        except BotoCoreError as exc:
            raise GeneratorError(f"IAM: {_reason(exc)}") from None


def _sdk_errors() -> tuple[Any, Any]:
    try:
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError:  # an optional SDK (make cloud), as for the aws/* targets
        raise GeneratorError("install the 'boto3' package (make cloud) to use aws_iam_key") from None
    return BotoCoreError, ClientError


def _reason(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", type(exc).__name__))
    return type(exc).__name__
