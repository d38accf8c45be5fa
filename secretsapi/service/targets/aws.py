"""What the ``aws/*`` kinds share: clients, error translation, and the write and read of a named entry.

Clients take their settings from the provider or the AWS_* environment.

Provider settings (``config``, or ``auth.config``): ``region`` (``region_name``),
``endpoint_url``, ``profile`` (``profile_name``), ``access_key_id`` / ``secret_access_key`` /
``session_token`` (also with an ``aws_`` prefix), ``timeout`` (seconds, default 5),
``max_concurrency`` (calls in flight at once, default 8; see ``fanout``). Anything
not given comes from the environment and boto3's usual chain: AWS_REGION or AWS_DEFAULT_REGION,
AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_PROFILE, shared files, instance metadata.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import ReadBack, TargetContext
from secretsapi.service.targets.remote import (
    ClientCache,
    Provider,
    checked_group,
    checked_provider,
    collect,
    load_sdk,
    same_config,
    sdk_errors,
    sdk_failure,
)
from secretsapi.service.util.hashing import sha256_text

AUTH_KINDS = ("ambient", "env", "static", "access_key", "profile", "assume_role")
DEFAULT_SESSION_NAME = "secretzero-session"  # SecretZero's RoleSessionName
_ENV = ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE")
_AUTH_CODES = {
    "AccessDenied", "AccessDeniedException", "UnrecognizedClientException", "InvalidClientTokenId",
    "InvalidSignatureException", "SignatureDoesNotMatch", "ExpiredToken", "ExpiredTokenException",
    "AuthFailure", "MissingAuthenticationToken", "KMSAccessDeniedException",
}
_THROTTLE_CODES = {"ThrottlingException", "Throttling", "TooManyUpdates", "RequestLimitExceeded"}

# Attempts per call, the first included: enough to ride out brief throttling; a dead endpoint
# still fails within a few timeouts.
MAX_ATTEMPTS = 4

_clients = ClientCache()


def aws_client(service: str, target: TargetSpec, ctx: TargetContext, type_: str) -> Any:
    """A cached boto3 client with short timeouts, for ``target``'s provider.

    boto3 clients are thread-safe, so one serves every thread of the provider's pool (see
    ``fanout``), with a connection for each, and its retries are botocore's adaptive mode:
    throttling answers are retried with backoff and slow the whole client down, the pool
    included, until AWS stops throttling.
    """
    boto3 = load_sdk("boto3", "boto3", type_)
    botocore_config = load_sdk("botocore.config", "boto3", type_)
    provider = checked_provider(target, ctx, AUTH_KINDS, "AWS")
    timeout = provider.timeout
    connections = max(10, provider.max_concurrency)  # botocore's default pool holds 10
    options = _options(provider)

    def make() -> Any:
        with sdk_errors(client_error, f"provider '{provider.alias}'", "client setup"):
            session = boto3.session.Session(
                aws_access_key_id=options["access_key_id"],
                aws_secret_access_key=options["secret_access_key"],
                aws_session_token=options["session_token"],
                region_name=options["region"],
                profile_name=options["profile"],
            )
            config = botocore_config.Config(
                connect_timeout=timeout, read_timeout=timeout, max_pool_connections=connections,
                retries={"total_max_attempts": MAX_ATTEMPTS, "mode": "adaptive"},
            )
            if role is not None:
                session = _assumed_role(session, role, options, config)
            return session.client(service, endpoint_url=options["endpoint_url"], config=config)

    role = _role(provider)
    return _clients.get((service, options, role, timeout, connections,
                         {name: os.environ.get(name) for name in _ENV}), make)


def _role(provider: Provider) -> dict[str, str] | None:
    """AssumeRole's parameters for auth kind ``assume_role`` (SecretZero's ``role_arn`` and
    ``session_name``, plus ``external_id`` for roles that require one)."""
    if provider.auth_kind != "assume_role":
        return None
    role_arn = provider.text("role_arn")
    if role_arn is None:
        raise TargetError(f"provider '{provider.alias}': auth kind assume_role needs role_arn")
    request = {"RoleArn": role_arn, "RoleSessionName": provider.text("session_name") or DEFAULT_SESSION_NAME}
    external_id = provider.text("external_id")
    if external_id is not None:
        request["ExternalId"] = external_id
    sts_endpoint = provider.text("sts_endpoint_url")
    if sts_endpoint is not None:
        request["sts_endpoint_url"] = sts_endpoint
    return request


def _assumed_role(base: Any, role: dict[str, str], options: Mapping[str, str | None],
                  config: Any) -> Any:
    """A session with the role's temporary credentials, from STS AssumeRole called with the base
    session's (the provider's keys, profile or the usual chain). botocore refreshes them before
    they expire, so a cached client outlives the first hour."""
    request = {k: v for k, v in role.items() if k != "sts_endpoint_url"}
    sts = base.client("sts", endpoint_url=role.get("sts_endpoint_url") or options["endpoint_url"],
                      config=config)
    credentials = load_sdk("botocore.credentials", "boto3", "aws")
    botocore_session = load_sdk("botocore.session", "boto3", "aws")

    def fetch() -> dict[str, str]:
        issued = sts.assume_role(**request)["Credentials"]
        return {"access_key": issued["AccessKeyId"], "secret_key": issued["SecretAccessKey"],
                "token": issued["SessionToken"], "expiry_time": issued["Expiration"].isoformat()}

    refreshing = credentials.RefreshableCredentials.create_from_metadata(
        metadata=fetch(), refresh_using=fetch, method="sts-assume-role")
    core = botocore_session.get_session()
    # boto3 has no public way to hand a session refreshable credentials: this is botocore's own
    # slot for them (what its assume-role provider fills).
    core._credentials = refreshing
    boto3 = load_sdk("boto3", "boto3", "aws")
    return boto3.session.Session(botocore_session=core, region_name=options["region"])


def _options(provider: Provider) -> dict[str, str | None]:
    options = {
        # boto3 reads AWS_DEFAULT_REGION itself; AWS_REGION is what most other AWS tools set.
        "region": provider.text("region", "region_name") or os.environ.get("AWS_REGION") or None,
        "endpoint_url": provider.text("endpoint_url", "endpoint"),
        "profile": provider.text("profile", "profile_name"),
        "access_key_id": provider.text("access_key_id", "aws_access_key_id"),
        "secret_access_key": provider.text("secret_access_key", "aws_secret_access_key"),
        "session_token": provider.text("session_token", "aws_session_token"),
    }
    if bool(options["access_key_id"]) != bool(options["secret_access_key"]):
        raise TargetError(f"provider '{provider.alias}': access_key_id and secret_access_key "
                          "must be given together")
    return options


def error_code(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return str(code) if code else None
    return None


def client_error(exc: BaseException, where: str, operation: str) -> TargetError:
    """A TargetError for any boto3/botocore failure: its class or error code, never its text."""
    if isinstance(exc, TargetError):
        return exc
    name = type(exc).__name__
    code = error_code(exc)
    if code in _AUTH_CODES:
        return TargetError(f"{where}: permission denied or credentials rejected ({code})")
    if code in _THROTTLE_CODES:
        return TargetError(f"{where}: throttled by AWS ({code})")
    if code:
        return TargetError(f"{where}: {operation} failed ({code})")
    if name in ("NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError"):
        return TargetError(f"{where}: no usable AWS credentials (set access_key_id and "
                           "secret_access_key in the provider's auth, or the AWS_* environment)")
    if name == "NoRegionError":
        return TargetError(f"{where}: no AWS region (set region in the provider, or AWS_REGION)")
    if name == "ProfileNotFound":
        return TargetError(f"{where}: the AWS profile is not configured")
    if name == "ParamValidationError":  # its message can quote the value
        return TargetError(f"{where}: {operation} rejected by the SDK's parameter validation")
    return sdk_failure(exc, where, operation)


class NamedEntryKind(ABC):
    """An AWS kind keeping a secret as one entry named by ``config.name``, in the provider's region.

    Each kind says what its config holds (``validate``, ``agreed``) and how to ``store`` and
    ``fetch`` the entry; ids, groups, and the write and read around those calls are shared.
    A group is that one entry: write and read check only its first placement's config, since
    the others name the same entry and a write's ``same_config`` makes them agree on the rest.
    """

    type: str
    service: str  # boto3's name for the service
    agreed: tuple[str, ...]  # config keys every placement of a group must agree on

    @abstractmethod
    def validate(self, target: TargetSpec, where: str) -> list[str]: ...

    @abstractmethod
    def store(self, client: Any, config: Mapping[str, Any], value: str, where: str) -> None:
        """Write ``value`` to the entry ``config`` names; a TargetError (never SDK text) if it fails."""

    @abstractmethod
    def fetch(self, client: Any, name: str, where: str) -> tuple[str, str | None] | None:
        """The entry's hash and value (value None when not reusable, e.g. binary); None if absent."""

    def target_id(self, target: TargetSpec, ctx: TargetContext) -> str:
        return f"{target.provider}/{target.kind}/{target.config.get('name')}"

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        return str(target.config.get("name"))

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, target.provider, str(target.config.get("name")))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        if not items:
            return {}
        target = items[0][0].target
        where = checked_group(self.validate, [target], self.location(target, ctx))
        config = same_config([p for p, _ in items], self.agreed, where)
        (value,) = collect(items, lambda p: str(config["name"]), where).values()
        self.store(aws_client(self.service, target, ctx, self.type), config, value, where)
        return {p.key: sha256_text(value) for p, _ in items}

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        target = items[0].target
        where = checked_group(self.validate, [target], self.location(target, ctx))
        name = str(target.config["name"])
        fetched = self.fetch(aws_client(self.service, target, ctx, self.type), name, where)
        if fetched is None:
            return {p.key: ReadBack(False, None, name) for p in items}
        stored_hash, stored = fetched
        return {p.key: ReadBack(True, stored_hash, name, stored) for p in items}
