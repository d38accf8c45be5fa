"""What the ``aws/*`` kinds share: clients, error translation, and the write and read of a named entry.

Clients take their settings from the provider or the AWS_* environment.

Provider settings (``config``, or ``auth.config``): ``region`` (``region_name``),
``endpoint_url``, ``profile`` (``profile_name``), ``access_key_id`` / ``secret_access_key`` /
``session_token`` (also with an ``aws_`` prefix), ``timeout`` (seconds, default 5),
``max_concurrency`` (calls in flight at once, default 8; see ``fanout``). Anything
not given comes from the environment and boto3's usual chain: AWS_REGION or AWS_DEFAULT_REGION,
AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_PROFILE, shared files, instance metadata.

Credentials from that chain (or a ``profile`` of the server's shared files) are the server's: an
``endpoint_url`` or ``sts_endpoint_url`` the definition names must then be AWS's own or one the
operator lists (``egress``); boto3's own endpoints and AWS_ENDPOINT_URL are the operator's.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.providers import CONCURRENCY, TIMEOUT, Provider, checked_provider, provider_of
from secretsapi.service.targets.remote import (
    ClientCache,
    checked_group,
    collect,
    load_sdk,
    same_config,
    sdk_errors,
    sdk_failure,
)
from secretsapi.service.targets.schema import AuthKind, ProviderSchema, Setting
from secretsapi.service.util.hashing import sha256_text

DEFAULT_SESSION_NAME = "secretzero-session"  # SecretZero's RoleSessionName
# AWS's own endpoints of the services these kinds call (``*``: one label, the region).
_HOSTED = tuple(f"https://{service}.{region}{suffix}"
                for service in ("ssm", "ssm-fips", "secretsmanager", "secretsmanager-fips", "sts", "sts-fips")
                for region, suffix in (("*", ".amazonaws.com"), ("*", ".amazonaws.com.cn"), ("*", ".api.aws")))
AWS = ProviderSchema(
    "aws", "AWS",
    "Amazon Web Services through boto3; unset settings come from boto3's usual chain (AWS_* environment, "
    "shared files, instance metadata).",
    config={
        "region": Setting("string", "AWS region; AWS_REGION by default"),
        "endpoint_url": Setting("string", "endpoint override, e.g. a local test server"),
        "profile": Setting("string", "profile of the shared AWS config files"),
        "timeout": TIMEOUT,
        "max_concurrency": CONCURRENCY,
    },
    auth_kinds=(AuthKind("ambient"), AuthKind("env"), AuthKind("static"), AuthKind("access_key"),
                AuthKind("profile"), AuthKind("assume_role", requires=("role_arn",))),
    auth_config={
        "access_key_id": Setting("string", "access key id (with secret_access_key)"),
        "secret_access_key": Setting("string", "secret access key"),
        "session_token": Setting("string", "session token of temporary credentials"),
        "role_arn": Setting("string", "auth kind assume_role: the role STS AssumeRole gives credentials of"),
        "session_name": Setting("string", "assume_role: the role session's name", DEFAULT_SESSION_NAME),
        "external_id": Setting("string", "assume_role: the external id the role requires"),
        "sts_endpoint_url": Setting("string", "assume_role: STS endpoint override (endpoint_url by default)"),
    },
    hosted=(*_HOSTED, "https://sts.amazonaws.com"),
    addressed=True,
)
PROVIDERS = (AWS,)
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
    provider = checked_provider(target, ctx, AWS)
    timeout = provider.timeout
    connections = max(10, provider.max_concurrency)  # botocore's default pool holds 10
    options = _options(provider)
    if options["profile"]:  # one of the server's identities, by name: only those the operator lists
        ctx.egress.check_aws_profile(options["profile"], provider.alias)
    _check_endpoints(boto3, provider, options, ctx)

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
    if role is not None and _server_credentials(options):  # the server's identity, turned into another
        ctx.egress.check_aws_role(role["RoleArn"], provider.alias)
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


def _check_endpoints(boto3: Any, provider: Provider, options: Mapping[str, str | None], ctx: TargetContext) -> None:
    """An endpoint the definition names gets the server's credentials (its chain, a profile of its
    files) only if the operator allows it (``egress``); refused before any request, when the
    server has credentials to send (else boto3 reports that none are usable)."""
    if not _server_credentials(options):
        return
    operator = os.environ.get("AWS_ENDPOINT_URL")
    for given in (options["endpoint_url"], provider.text("sts_endpoint_url")):
        if given and not ctx.egress.allows(given, kind=AWS.kind, hosted=AWS.hosted, operator=operator) and (
                _chain_has_credentials(boto3, options)):
            provider.address(ctx, AWS, given, operator, None, server_credential="the server's AWS credentials")


def _chain_has_credentials(boto3: Any, options: Mapping[str, str | None]) -> bool:
    try:
        session = boto3.session.Session(aws_access_key_id=options["access_key_id"],
                                        aws_secret_access_key=options["secret_access_key"],
                                        aws_session_token=options["session_token"], profile_name=options["profile"])
        return session.get_credentials() is not None
    except Exception:  # a profile that cannot be read: refused rather than guessed
        return True


def _server_credentials(options: Mapping[str, str | None]) -> bool:
    """Whether boto3 takes the credentials from the server (its chain, or a profile of its files)."""
    return not (options["access_key_id"] and options["secret_access_key"]) or bool(options["profile"])


def server_credentials(target: TargetSpec, ctx: TargetContext) -> bool:
    return _server_credentials(_options(provider_of(target, ctx)))


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
    if code and code.isdigit() and 300 <= int(code) < 400:
        return TargetError(f"{where}: {operation} failed ({code}: the endpoint answered with a redirect, which "
                           "is never followed; check endpoint_url)")
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


class NamedEntryKind(Kind, ABC):
    """An AWS kind keeping a secret as one entry named by ``config.name``, in the provider's region.

    Each kind says what its config holds (``validate``, ``agreed``) and how to ``store`` and
    ``fetch`` the entry; ids, groups, and the write and read around those calls are shared.
    A group is that one entry: write and read check only its first placement's config, since
    the others name the same entry and a write's ``same_config`` makes them agree on the rest.
    """

    service: str  # boto3's name for the service
    agreed: tuple[str, ...]  # config keys every placement of a group must agree on

    @abstractmethod
    def store(self, client: Any, config: Mapping[str, Any], value: str, where: str) -> None:
        """Write ``value`` to the entry ``config`` names; a TargetError (never SDK text) if it fails."""

    @abstractmethod
    def fetch(self, client: Any, name: str, where: str) -> tuple[str, str | None] | None:
        """The entry's hash and value (value None when not reusable, e.g. binary); None if absent."""

    def target_id(self, target: TargetSpec, ctx: TargetContext) -> str:
        return f"{target.provider}/{target.kind}/{target.config.get('name')}"

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        return server_credentials(target, ctx)

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        return str(target.config.get("name"))

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, target.provider, str(target.config.get("name")))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        if not items:
            return {}
        target = items[0][0].target
        where = checked_group(self, [target], self.location(target, ctx), ctx)
        config = same_config([p for p, _ in items], self.agreed, where)
        (value,) = collect(items, lambda p: str(config["name"]), where).values()
        self.store(aws_client(self.service, target, ctx, self.type), config, value, where)
        return {p.key: sha256_text(value) for p, _ in items}

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        target = items[0].target
        where = checked_group(self, [target], self.location(target, ctx), ctx)
        name = str(target.config["name"])
        fetched = self.fetch(aws_client(self.service, target, ctx, self.type), name, where)
        if fetched is None:
            return {p.key: ReadBack(False, None, name) for p in items}
        stored_hash, stored = fetched
        return {p.key: ReadBack(True, stored_hash, name, stored) for p in items}
