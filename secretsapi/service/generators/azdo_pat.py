"""``azdo_pat``: an Azure DevOps personal access token, through the PAT lifecycle management API
(``https://vssps.dev.azure.com/{organization}/_apis/tokens/pats?api-version=7.1-preview.1``), with
SecretZero's config keys: ``provider`` (default ``azdo``), ``display_name``, ``scopes`` (a list,
sent space-separated as the API's ``scope``), ``valid_to`` (ISO date-time; the organization's
default lifetime when unset), ``revoke_existing`` (true).

Microsoft accepts only a Microsoft Entra access token on this API (``Authorization: Bearer``): a
PAT cannot create PATs. The provider's ``token`` (auth config; else the server's AZDO_PAT, then
AZURE_DEVOPS_EXT_PAT) is sent as a bearer token when it is a JWT, else as SecretZero sends it
(basic, empty user): Azure DevOps then refuses it, and the secret fails saying so. Organization:
the provider's ``organization``, else the server's AZDO_ORGANIZATION. State (drift) and revoking:
``GET`` and ``DELETE`` with ``authorizationId``.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from secretsapi.service.definition.model import GeneratorSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.generators.tokens import (
    ACTIVE,
    EXPIRED,
    MISSING,
    Issued,
    check_server_credential,
    option,
    provider_for,
    register,
)
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.providers import TIMEOUT, VERIFY
from secretsapi.service.targets.rest import base_url, json_body, request, session, status_error, timestamp, tls_verify
from secretsapi.service.targets.schema import AuthKind, ProviderSchema, Setting

DEFAULT_URL = "https://vssps.dev.azure.com"
API_VERSION = "7.1-preview.1"
AZDO = ProviderSchema(
    "azure_devops", "Azure DevOps",
    "Azure DevOps Services (its PAT lifecycle API); the provider's token, else AZDO_PAT.",
    config={"organization": Setting("string", "organization name"),
            "url": Setting("string", "token service address", DEFAULT_URL), "verify": VERIFY, "timeout": TIMEOUT},
    auth_kinds=(AuthKind("token"), AuthKind("env")),
    auth_config={"token": Setting("string", "Microsoft Entra access token"),
                 "token_file": Setting("string", "file holding the token")},
    hosted=(DEFAULT_URL,),
    addressed=True,
)


class _Api:
    def __init__(self, config: Mapping[str, Any], ctx: TargetContext) -> None:
        provider = provider_for(config, ctx, AZDO, "azdo")
        own = provider.token(ctx)
        token = own or os.environ.get("AZDO_PAT") or os.environ.get("AZURE_DEVOPS_EXT_PAT")
        if not token:
            raise TargetError(f"provider '{provider.alias}': no Azure DevOps token (set token or token_file in the "
                              "provider's auth, or AZDO_PAT)")
        organization = provider.text("organization") or os.environ.get("AZDO_ORGANIZATION")
        if not organization:
            raise TargetError(f"provider '{provider.alias}': organization is required (or AZDO_ORGANIZATION)")
        address = provider.address(ctx, AZDO, provider.text("url"), None, DEFAULT_URL,
                                   server_credential=None if own else "the server's AZDO_PAT")
        self.server = own is None
        self.provider = provider
        self.organization = organization
        self.url = f"{base_url(str(address), provider.alias, 'url')}/{quote(organization, safe='')}/_apis/tokens/pats"
        self.timeout = provider.timeout
        self.where = f"azdo_pat (provider '{provider.alias}')"
        jwt = token.count(".") == 2
        auth = f"Bearer {token}" if jwt else "Basic " + base64.b64encode(f":{token}".encode()).decode()
        self.http = session((self.url, token), {"Authorization": auth, "User-Agent": "secretsapi"}, "azdo_pat",
                            tls_verify(provider, ctx))

    def call(self, method: str, operation: str, ok: tuple[int, ...], query: str = "",
             body: Any = None) -> tuple[int, Any]:
        url = f"{self.url}?api-version={API_VERSION}{query}"
        response = request(self.http, method, url, where=self.where, operation=operation, timeout=self.timeout,
                           **({} if body is None else {"json": body}))
        if response.status_code == 400 and response.content:
            refusal = _refusal(json_body(response, self.where, operation))
            if refusal is not None:
                raise TargetError(f"{self.where}: {operation} refused by Azure DevOps ({refusal})")
        if response.status_code not in ok:
            raise status_error(response, self.where, operation, "no such token")
        return response.status_code, (json_body(response, self.where, operation) if response.content else None)


def _refusal(answer: Any) -> str | None:
    """The answer's ``patTokenError`` unless ``none``: an error name (never a value)."""
    error = answer.get("patTokenError") if isinstance(answer, dict) else None
    if not isinstance(error, str) or error == "none":
        return None
    return error if error.isalnum() else "an unnamed error"


def _pat(answer: Any, where: str, operation: str) -> dict[str, Any]:
    """The answer's ``patToken``; a TargetError naming its refusal, if any."""
    refusal = _refusal(answer)
    if refusal is not None:
        raise TargetError(f"{where}: {operation} refused by Azure DevOps ({refusal})")
    found = answer.get("patToken") if isinstance(answer, dict) else None
    if not isinstance(found, dict):
        raise TargetError(f"{where}: {operation} failed (the answer has no token)")
    return found


class AzdoPat:
    kind = "azdo_pat"
    description = ("An Azure DevOps personal access token, created through its PAT lifecycle API "
                   "(the value is the token).")

    def __init__(self) -> None:
        self.options: dict[str, dict[str, Any]] = {
            "provider": option("string", "azdo", "Provider alias (an azure_devops provider)."),
            "display_name": option("string", None, "The token's name (required)."),
            "scopes": option("array", None, "Azure DevOps scopes, e.g. [vso.code, vso.build] (required)."),
            "valid_to": option("string", None, "Expiry as an ISO 8601 date-time; the organization's default if unset."),
            "revoke_existing": option("boolean", True, "Revoke the previous token once the targets hold the new one."),
        }

    def validate(self, config: Mapping[str, Any], where: str, errors: list[str]) -> None:
        if not isinstance(config.get("display_name"), str) or not config.get("display_name"):
            errors.append(f"{where}.config.display_name: required")
        scopes = config.get("scopes")
        if not isinstance(scopes, list) or not scopes or not all(isinstance(s, str) and s for s in scopes):
            errors.append(f"{where}.config.scopes: must be a non-empty list")
        valid_to = config.get("valid_to")
        if valid_to is not None and timestamp(str(valid_to)) is None:
            errors.append(f"{where}.config.valid_to: must be an ISO 8601 date-time")
        if config.get("revoke_existing") not in (None, True, False):
            errors.append(f"{where}.config.revoke_existing: must be true or false")

    def issue(self, spec: GeneratorSpec, ctx: TargetContext, now: datetime,
              previous: Mapping[str, Any] | None = None) -> Issued:
        config = spec.config
        api = _Api(config, ctx)
        check_server_credential(ctx, f"{api.provider.kind}/{self.kind}", api.organization, api.server)
        body: dict[str, Any] = {"displayName": config["display_name"], "scope": " ".join(config["scopes"]),
                                "allOrgs": False}
        if config.get("valid_to") is not None:
            body["validTo"] = str(config["valid_to"])
        _, answer = api.call("POST", "token creation", (200,), body=body)
        made = _pat(answer, api.where, "token creation")
        if not isinstance(made.get("token"), str) or not made["token"]:
            raise TargetError(f"{api.where}: token creation failed (the answer has no token)")
        return Issued(made["token"], {"provider": api.provider.alias, "owner": api.organization,
                                      "id": made.get("authorizationId"), "name": made.get("displayName"),
                                      "expires_at": made.get("validTo"), "created_at": made.get("validFrom")})

    def revoke(self, record: Mapping[str, Any], ctx: TargetContext) -> None:
        api = _Api(record, ctx)
        check_server_credential(ctx, f"{api.provider.kind}/{self.kind}", api.organization, api.server)
        api.call("DELETE", "token revocation", (204, 404), f"&authorizationId={quote(str(record.get('id')))}")

    def state(self, record: Mapping[str, Any], ctx: TargetContext, now: datetime) -> str:
        api = _Api(record, ctx)
        status, answer = api.call("GET", "token check", (200, 404), f"&authorizationId={quote(str(record.get('id')))}")
        if status == 404:
            return MISSING
        found = _pat(answer, api.where, "token check")
        expires = timestamp(found.get("validTo"))
        return EXPIRED if expires is not None and expires.astimezone(UTC) < now.astimezone(UTC) else ACTIVE

    def same_name(self, record: Mapping[str, Any], ctx: TargetContext) -> list[dict[str, Any]]:
        return []  # SecretZero revokes nothing by name here; the previous token is the recorded one


register(AzdoPat())
