"""Provider-backed generators: tokens created at their source through the vendor's REST API
(SecretZero's ``gitlab_project_token``, ``gitlab_group_token``, ``gitlab_group_service_account``,
``azdo_pat`` and ``github_pat``), with SecretZero's config keys.

An issuer creates a token (``issue``), revokes one (``revoke``) and says whether one still works
at its source (``state``). What it issued is a ``record`` kept in the lockfile entry (its id,
name, owner, expiry: never the token); the write that stores a new token keeps its predecessor's
record under ``SUPERSEDED`` until the targets hold the new one and the lockfile is committed,
then revokes it (``state.superseded``): a revoke that fails stays there and is tried again by the
next sync or rotation.

Credentials follow the provider's rule as targets do: the definition's own (``token`` or
``token_file`` under auth), else the server's environment (GITLAB_TOKEN...), which goes only to
an address ``egress`` allows, and creates tokens only for the projects and groups the operator
lists in SERVICE_PROVIDER_READ (``<provider>/<kind>=<path prefix>``): a token is a credential
read out of the operator's account, so a definition may not mint one for another team's project.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from secretsapi.service.definition.model import GeneratorSpec
from secretsapi.service.errors import GeneratorError, TargetError
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.providers import Provider, check_auth_kind
from secretsapi.service.targets.schema import ProviderSchema, provider_settings

# Lockfile entry keys (beside SecretZero's): what the entry's value is, and what it replaced
# and is still to be revoked.
ISSUED = "issued_token"
SUPERSEDED = "superseded_tokens"
# A token's state at its source (``Issuer.state``).
ACTIVE, REVOKED, EXPIRED, MISSING = "active", "revoked", "expired", "missing"


@dataclass(frozen=True)
class Issued:
    """A token just created: its text (the secret's value) and its record (no value)."""

    value: str = field(repr=False)
    record: dict[str, Any]


class Issuer(Protocol):
    kind: str
    description: str
    options: dict[str, dict[str, Any]]

    def validate(self, config: Mapping[str, Any], where: str, errors: list[str]) -> None: ...

    def issue(self, spec: GeneratorSpec, ctx: TargetContext, now: datetime,
              previous: Mapping[str, Any] | None = None) -> Issued:
        """A new token; ``previous`` is the record of the one it replaces (None: the first)."""
        ...

    def revoke(self, record: Mapping[str, Any], ctx: TargetContext) -> None:
        """Revoke the token ``record`` names (a token already gone is revoked); TargetError when not."""
        ...

    def state(self, record: Mapping[str, Any], ctx: TargetContext, now: datetime) -> str: ...

    def same_name(self, record: Mapping[str, Any], ctx: TargetContext) -> list[dict[str, Any]]:
        """Records of the other active tokens of the record's name at its owner (``revoke_existing``)."""
        ...


_ISSUERS: dict[str, Issuer] = {}


def option(type_: str, default: Any, description: str) -> dict[str, Any]:
    """One config key as ``GENERATORS`` lists it (``GET /secret-types``, the docs' table)."""
    return {"type": type_, "default": default, "description": description}


def register(issuer: Issuer) -> Issuer:
    _ISSUERS[issuer.kind] = issuer
    return issuer


def issuer_of(kind: str) -> Issuer | None:
    """The issuer of a token kind (the package registers them all: ``generators/__init__``)."""
    return _ISSUERS.get(kind)


def token_kinds() -> tuple[str, ...]:
    return tuple(_ISSUERS)


def issue(spec: GeneratorSpec, ctx: TargetContext, now: datetime,
          previous: Mapping[str, Any] | None = None) -> Issued:
    """A new token for ``spec``; GeneratorError (naming no value) when it cannot be created."""
    issuer = issuer_of(spec.kind)
    if spec.unavailable is not None:
        raise GeneratorError(spec.unavailable)
    if issuer is None:
        raise GeneratorError(f"generator kind '{spec.kind}' does not create tokens")
    errors: list[str] = []
    issuer.validate(spec.config, "generator", errors)
    if errors:
        raise GeneratorError("; ".join(errors))
    try:
        issued = issuer.issue(spec, ctx, now, previous)
    except TargetError as exc:
        raise GeneratorError(f"{spec.kind}: {exc.message}") from None
    except Exception as exc:  # never its text: it can quote an answer, which holds the token
        raise GeneratorError(f"{spec.kind}: token creation failed ({type(exc).__name__})") from None
    return Issued(issued.value, {"kind": spec.kind, **issued.record,
                                 "revoke_existing": _revokes(spec)})


def revoke(record: Mapping[str, Any], ctx: TargetContext) -> None:
    """Revoke the recorded token; TargetError (naming no value) when that fails."""
    issuer = issuer_of(str(record.get("kind")))
    if issuer is None:
        raise TargetError(f"unknown token kind {str(record.get('kind'))[:40]!r}")
    _contained(lambda: issuer.revoke(record, ctx), "token revocation")


def state(record: Mapping[str, Any], ctx: TargetContext, now: datetime) -> str:
    """The recorded token's state at its source; TargetError when it cannot be read."""
    issuer = issuer_of(str(record.get("kind")))
    if issuer is None:
        raise TargetError(f"unknown token kind {str(record.get('kind'))[:40]!r}")
    return str(_contained(lambda: issuer.state(record, ctx, now), "token check"))


def same_name(record: Mapping[str, Any], ctx: TargetContext) -> list[dict[str, Any]]:
    """The other active tokens of the record's name at its owner (``Issuer.same_name``)."""
    issuer = issuer_of(str(record.get("kind")))
    return [] if issuer is None else list(_contained(lambda: issuer.same_name(record, ctx), "token listing"))


def _contained(call: Callable[[], Any], operation: str) -> Any:
    try:
        return call()
    except TargetError:
        raise
    except Exception as exc:  # never its text: it can quote an answer
        raise TargetError(f"{operation} failed ({type(exc).__name__})") from None


def _revokes(spec: GeneratorSpec) -> bool:
    """SecretZero's default: the previous tokens go (``revoke_existing``, the service account's
    ``rotate_existing``), true unless set to false."""
    key = "rotate_existing" if spec.kind == "gitlab_group_service_account" else "revoke_existing"
    return spec.config.get(key) is not False


def provider_for(config: Mapping[str, Any], ctx: TargetContext, schema: ProviderSchema, default: str) -> Provider:
    """The provider a generator's ``provider`` names (SecretZero's default alias otherwise)."""
    alias = config.get("provider") or default
    if not isinstance(alias, str):
        raise TargetError("config.provider must be a provider name")
    spec = ctx.providers.get(alias)
    if spec is None:
        provider = Provider(alias, schema.kind, None, {})
    else:
        if spec.kind != schema.kind:
            raise TargetError(f"provider '{alias}' is a {spec.kind} provider, not {schema.kind}")
        auth_kind = spec.auth.get("kind") if isinstance(spec.auth, Mapping) else None
        provider = Provider(spec.alias, spec.kind, auth_kind if isinstance(auth_kind, str) else None,
                            provider_settings(spec))
    check_auth_kind(provider, schema)
    return provider


def check_server_credential(ctx: TargetContext, kind: str, owner: str, server: bool) -> None:
    """With the server's own credentials, a token is minted only for an owner (project, group,
    organization) the operator lists for ``kind`` in SERVICE_PROVIDER_READ."""
    if server:
        ctx.egress.check_read(kind, owner)


def records_to_revoke(entry_extra: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The superseded records of a lockfile entry (malformed items dropped)."""
    found = entry_extra.get(SUPERSEDED)
    if not isinstance(found, list):
        return []
    return [dict(item) for item in found if isinstance(item, Mapping) and isinstance(item.get("kind"), str)]


def issued_record(entry_extra: Mapping[str, Any]) -> dict[str, Any] | None:
    found = entry_extra.get(ISSUED)
    return dict(found) if isinstance(found, Mapping) and isinstance(found.get("kind"), str) else None


def with_issued(extra: Mapping[str, Any], record: Mapping[str, Any] | None,
                previous: Mapping[str, Any]) -> dict[str, Any]:
    """``extra`` with ``record`` as the entry's token and ``previous``'s token (when its kind
    revokes) added to those to revoke; without ``record``, ``extra`` as it is."""
    if record is None:
        return dict(extra)
    updated = dict(extra)
    pending = records_to_revoke(previous)
    before = issued_record(previous)
    if before is not None and before.get("id") != record.get("id") and record.get("revoke_existing", True):
        pending.append(before)
    updated[ISSUED] = dict(record)
    updated[SUPERSEDED] = pending  # an empty list, not no key: the lockfile keeps keys an entry drops
    return updated


def expires_at(record: Mapping[str, Any]) -> datetime | None:
    """When the recorded token stops working: its ``expires_at`` (GitLab's date is the day it
    expires, from midnight UTC); None when unknown."""
    text = record.get("expires_at")
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def describe(record: Mapping[str, Any]) -> str:
    """A record as errors name it: kind, owner, name and id (never the token)."""
    return f"{record.get('kind')} '{record.get('name')}' (id {record.get('id')}) of {record.get('owner')}"
