"""``github_pat``: what SecretZero's generator of that name creates. GitHub's REST API has no
endpoint that creates a personal access token (classic or fine-grained: only a person can, in
GitHub's settings), so SecretZero, and this service, create the API's equivalent: a GitHub App
installation access token scoped to ``permissions`` and ``repositories``
(``POST /app/installations/{installation_id}/access_tokens``, authenticated by a JWT signed with
the App's private key, RS256, as GitHub's "Authenticating as a GitHub App" describes).

Config (SecretZero's keys): ``provider`` (default ``github``), ``permissions`` (name to ``read``,
``write`` or ``admin``; SecretZero's list of names), ``repositories`` (names) or ``repository``
(``owner/name``; the provider's ``repository`` otherwise), ``token_name`` (a label in the lockfile
record; GitHub names no token) and ``expires_in_hours`` (accepted; GitHub fixes the lifetime at one
hour, and its answer's ``expires_at`` is what is recorded).

The App: the provider's ``app_id``, ``installation_id`` and ``private_key`` or ``private_key_path``
(a file in the definition's folder), else the server's GITHUB_APP_ID, GITHUB_APP_INSTALLATION_ID,
GITHUB_APP_PRIVATE_KEY(_PATH): then the token is minted only for an installation the operator
lists for ``github/github_pat`` in SERVICE_PROVIDER_READ. Address: the provider's ``api_url``, else
GITHUB_API_URL, else https://api.github.com.

An installation token cannot be looked up or revoked by anyone but its holder (``DELETE
/installation/token`` takes the token itself, which the service does not keep): the previous one
is left to expire within its hour, as SecretZero leaves it; drift reports a recorded token past its
``expires_at`` (a rotation_period under one hour keeps the targets' token working).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from secretsapi.service.definition.model import GeneratorSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.generators.tokens import (
    ACTIVE,
    EXPIRED,
    Issued,
    check_server_credential,
    option,
    provider_for,
    register,
)
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.github_secret import API_VERSION, DEFAULT_API_URL, GITHUB
from secretsapi.service.targets.providers import read_secret_file
from secretsapi.service.targets.remote import load_sdk
from secretsapi.service.targets.rest import base_url, json_body, request, session, status_error, timestamp, tls_verify

_RW = ("read", "write")
# SecretZero's GITHUB_PAT_PERMISSIONS: permission name -> the access levels it accepts.
PERMISSIONS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("actions", "administration", "checks", "codespaces", "contents", "dependabot_secrets",
                     "deployments", "environments", "issues", "metadata", "packages", "pages", "pull_requests",
                     "repository_hooks", "secret_scanning_alerts", "secrets", "security_events", "single_file",
                     "statuses", "vulnerability_alerts", "members", "organization_administration",
                     "organization_hooks", "organization_secrets", "organization_self_hosted_runners",
                     "team_discussions"), _RW),
    "repository_projects": ("read", "write", "admin"), "organization_projects": ("read", "write", "admin"),
    "workflows": ("write",), "organization_plan": ("read",),
}


def _jwt(app_id: str, private_key: str) -> str:
    """GitHub's App JWT: issued a minute ago (clock drift), valid ten minutes, signed RS256."""
    jwt = load_sdk("jwt", "pyjwt[crypto]", "github_pat")
    now = int(time.time())
    try:
        return str(jwt.encode({"iat": now - 60, "exp": now + 600, "iss": app_id}, private_key, algorithm="RS256"))
    except Exception:  # the key's own text never goes into the message
        raise TargetError("github_pat: the GitHub App's private key is not a usable RSA key (PEM)") from None


class GitHubAppToken:
    kind = "github_pat"
    description = ("A GitHub App installation token scoped like a fine-grained PAT (GitHub's API cannot create a "
                   "PAT; this is what SecretZero's github_pat creates). The value is the token.")

    def __init__(self) -> None:
        self.options: dict[str, dict[str, Any]] = {
            "provider": option("string", "github", "Provider alias (a github provider with the App's settings)."),
            "permissions": option("object", None, "Permission name to read, write or admin (default: the "
                                                "installation's own)."),
            "repositories": option("array", None, "Repository names the token is limited to."),
            "repository": option("string", None, "One owner/name repository (when repositories is unset)."),
            "token_name": option("string", None, "A label kept in the lockfile record (GitHub names no token)."),
            "expires_in_hours": option("integer", 1, "Accepted for SecretZero; GitHub's tokens last one hour."),
        }

    def validate(self, config: Mapping[str, Any], where: str, errors: list[str]) -> None:
        permissions = config.get("permissions")
        if permissions is not None and not isinstance(permissions, Mapping):
            errors.append(f"{where}.config.permissions: must map permission names to access levels")
        for name, level in (permissions or {}).items() if isinstance(permissions, Mapping) else ():
            if name not in PERMISSIONS:
                errors.append(f"{where}.config.permissions: unknown permission '{name}'")
            elif level not in PERMISSIONS[name]:
                errors.append(f"{where}.config.permissions.{name}: must be {' or '.join(PERMISSIONS[name])}")
        repositories = config.get("repositories")
        if repositories is not None and not (isinstance(repositories, list)
                                             and all(isinstance(r, str) and r for r in repositories)):
            errors.append(f"{where}.config.repositories: must be a list of repository names")
        hours = config.get("expires_in_hours", 1)
        if isinstance(hours, bool) or not isinstance(hours, int) or hours < 1:
            errors.append(f"{where}.config.expires_in_hours: must be a whole number of hours")

    def issue(self, spec: GeneratorSpec, ctx: TargetContext, now: datetime,
              previous: Mapping[str, Any] | None = None) -> Issued:
        config = spec.config
        provider = provider_for(config, ctx, GITHUB, "github")
        app_id = provider.settings.get("app_id")
        installation = provider.settings.get("installation_id")
        key = provider.text("private_key")
        if key is None and provider.text("private_key_path") is not None:
            key = read_secret_file(str(provider.text("private_key_path")), ctx, "private_key_path", provider.alias)
        own = app_id is not None and installation is not None and key is not None
        if not own:  # the server's App: every part from its environment
            app_id, installation = os.environ.get("GITHUB_APP_ID"), os.environ.get("GITHUB_APP_INSTALLATION_ID")
            key = os.environ.get("GITHUB_APP_PRIVATE_KEY")
            if key is None and os.environ.get("GITHUB_APP_PRIVATE_KEY_PATH"):
                try:
                    with open(os.environ["GITHUB_APP_PRIVATE_KEY_PATH"], encoding="utf-8") as handle:
                        key = handle.read()
                except (OSError, UnicodeDecodeError):
                    raise TargetError("github_pat: the server's GITHUB_APP_PRIVATE_KEY_PATH cannot be read") from None
        if not app_id or not installation or not key:
            raise TargetError(f"provider '{provider.alias}': github_pat needs a GitHub App: app_id, installation_id "
                              "and private_key (or private_key_path), or GITHUB_APP_ID, GITHUB_APP_INSTALLATION_ID "
                              "and GITHUB_APP_PRIVATE_KEY")
        address = provider.address(ctx, GITHUB, provider.text("api_url", "base_url", "url"),
                                   os.environ.get("GITHUB_API_URL"), DEFAULT_API_URL,
                                   server_credential=None if own else "the server's GitHub App key")
        check_server_credential(ctx, f"{GITHUB.kind}/{self.kind}", str(installation), not own)
        url = base_url(str(address), provider.alias, "api_url")
        where = f"github_pat (provider '{provider.alias}')"
        http = session((url, str(app_id)), {"Accept": "application/vnd.github+json", "User-Agent": "secretsapi",
                                            "X-GitHub-Api-Version": API_VERSION}, self.kind, tls_verify(provider, ctx))
        body: dict[str, Any] = {}
        if config.get("permissions"):
            body["permissions"] = dict(config["permissions"])
        repositories = config.get("repositories") or (
            [str(config.get("repository") or provider.settings.get("repository")).split("/")[-1]]
            if config.get("repository") or provider.settings.get("repository") else None)
        if repositories:
            body["repositories"] = list(repositories)
        response = request(http, "POST", f"{url}/app/installations/{quote(str(installation), safe='')}/access_tokens",
                           where=where, operation="token creation", timeout=provider.timeout, json=body,
                           headers={"Authorization": f"Bearer {_jwt(str(app_id), key)}"})
        if response.status_code != 201:
            raise status_error(response, where, "token creation", "no such installation")
        made = json_body(response, where, "token creation")
        if not isinstance(made, dict) or not isinstance(made.get("token"), str) or not made["token"]:
            raise TargetError(f"{where}: token creation failed (the answer has no token)")
        return Issued(made["token"], {"provider": provider.alias, "owner": str(installation), "id": None,
                                      "name": config.get("token_name"), "expires_at": made.get("expires_at"),
                                      "created_at": now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")})

    def revoke(self, record: Mapping[str, Any], ctx: TargetContext) -> None:
        return None  # only the token's holder can revoke it; it expires within the hour

    def state(self, record: Mapping[str, Any], ctx: TargetContext, now: datetime) -> str:
        expires = timestamp(record.get("expires_at"))
        return EXPIRED if expires is not None and expires <= now.astimezone(UTC) else ACTIVE

    def same_name(self, record: Mapping[str, Any], ctx: TargetContext) -> list[dict[str, Any]]:
        return []


register(GitHubAppToken())
