"""GitLab tokens created through GitLab's REST API v4, as SecretZero's generators create them:

- ``gitlab_project_token``: ``POST /projects/:id/access_tokens`` (a project access token);
- ``gitlab_group_token``: ``POST /groups/:id/access_tokens`` (a group access token);
- ``gitlab_group_service_account``: ``POST /groups/:top/service_accounts`` (once: the account is
  kept in the lockfile record and reused), then ``POST /groups/:top/service_accounts/:user/
  personal_access_tokens``, with the ``memberships`` added (``POST .../members``).

Config (SecretZero's keys): ``provider`` (default ``gitlab``), ``project`` / ``group`` (a path,
a numeric id, or ``auto``: the provider's ``project``/``group``, else GitLab CI's
CI_PROJECT_PATH / CI_PROJECT_NAMESPACE, else the project of the definition folder's git remote, or
for a group the group of that project),
``token_name``, ``scopes``, ``access_level`` (40), ``expires_in_days`` (90), ``description``,
``revoke_existing`` / ``rotate_existing`` (true). The value is the token text.

The token's state (drift) is ``GET .../access_tokens/:id`` (the service account's: its token
list); revoking is ``DELETE`` of the same, a 404 meaning it is already gone. The provider is the
gitlab targets' (``targets.gitlab_variable``): the same token, address and transport.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from secretsapi.service.definition.model import GeneratorSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.generators.tokens import (
    ACTIVE,
    EXPIRED,
    MISSING,
    REVOKED,
    Issued,
    check_server_credential,
    option,
    provider_for,
    register,
)
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.gitlab_variable import DEFAULT_URL, GITLAB
from secretsapi.service.targets.rest import base_url, json_body, request, session, status_error, tls_verify

# SecretZero's GITLAB_PROJECT_TOKEN_SCOPES (the same list for all three kinds).
SCOPES = ("api", "read_api", "read_registry", "write_registry", "read_repository", "write_repository",
          "create_runner", "manage_runner", "ai_features", "k8s_proxy", "self_rotate")
ACCESS_LEVELS = (10, 15, 20, 30, 40, 50)  # GitLab's roles: guest ... owner
MAX_DAYS = 400  # GitLab's longest token lifetime (365 days, 400 from 17.6 when allowed)


COMMON_OPTIONS = {
    "provider": option("string", "gitlab", "Provider alias (a gitlab provider) whose token creates the token."),
    "token_name": option("string", None, "The token's name in GitLab (required)."),
    "scopes": option("array", None, "GitLab scopes, e.g. [read_repository] (required): " + ", ".join(SCOPES) + "."),
    "expires_in_days": option("integer", 90, "Days until GitLab expires the token."),
    "description": option("string", None, "The token's description in GitLab."),
}


def problems(config: Mapping[str, Any], where: str, errors: list[str], *, owner: str, account: bool) -> None:
    for key in ("token_name",) + (("service_account_name",) if account else ()):
        if not isinstance(config.get(key), str) or not config.get(key):
            errors.append(f"{where}.config.{key}: required")
    scopes = config.get("scopes")
    if not isinstance(scopes, list) or not scopes:
        errors.append(f"{where}.config.scopes: must be a non-empty list")
    else:
        unknown = [str(s) for s in scopes if s not in SCOPES]
        if unknown:
            errors.append(f"{where}.config.scopes: unknown scopes: {', '.join(unknown)}")
    days = config.get("expires_in_days", 90)
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        errors.append(f"{where}.config.expires_in_days: must be a whole number of days from 1 to {MAX_DAYS}")
    if not account and config.get("access_level", 40) not in ACCESS_LEVELS:
        errors.append(f"{where}.config.access_level: must be one of {', '.join(map(str, ACCESS_LEVELS))}")
    place = config.get(owner, "auto")
    if isinstance(place, bool) or not isinstance(place, str | int):
        errors.append(f"{where}.config.{owner}: must be a path, a numeric id or auto")
    for key in ("revoke_existing", "rotate_existing"):
        if key in config and config[key] is not None and not isinstance(config[key], bool):
            errors.append(f"{where}.config.{key}: must be true or false")
    memberships = config.get("memberships")
    if account and memberships is not None and not (
        isinstance(memberships, list)
        and all(isinstance(m, Mapping) and m.get("resource_type") in ("group", "project")
                and m.get("access_level", 30) in ACCESS_LEVELS for m in memberships)
    ):
        errors.append(f"{where}.config.memberships: must be a list of {{resource_type: group|project, "
                      "resource, access_level: one of 10, 15, 20, 30, 40, 50}}")


class Api:
    """Calls to one GitLab instance with one provider's token, through the targets' transport."""

    def __init__(self, config: Mapping[str, Any], ctx: TargetContext, kind: str) -> None:
        provider = provider_for(config, ctx, GITLAB, "gitlab")
        own = provider.token(ctx)
        token = own or os.environ.get("GITLAB_TOKEN") or os.environ.get("GITLAB_PRIVATE_TOKEN")
        if not token:
            raise TargetError(f"provider '{provider.alias}': no GitLab token (set token or token_file in "
                              "the provider's auth, or GITLAB_TOKEN)")
        address = provider.address(ctx, GITLAB, provider.text("url", "base_url"),
                                   os.environ.get("GITLAB_URL") or os.environ.get("CI_SERVER_URL"), DEFAULT_URL,
                                   server_credential=None if own else "the server's GITLAB_TOKEN")
        self.server = own is None
        self.provider = provider
        self.folder = ctx.base_dir
        self.url = base_url(str(address), provider.alias, "url") + "/api/v4"
        self.timeout = provider.timeout
        self.where = f"{kind} (provider '{provider.alias}')"
        self.http = session((self.url, token), {"PRIVATE-TOKEN": token, "User-Agent": "secretsapi"}, kind,
                            tls_verify(provider, ctx))

    def call(self, method: str, path: str, operation: str, ok: tuple[int, ...], body: Any = None,
             missing: str = "no such project, group or token") -> tuple[int, Any]:
        response = request(self.http, method, self.url + path, where=self.where, operation=operation,
                           timeout=self.timeout, **({} if body is None else {"json": body}))
        if response.status_code not in ok:
            raise status_error(response, self.where, operation, missing)
        return response.status_code, (json_body(response, self.where, operation) if response.content else None)


def quoted(ident: Any) -> str:
    return quote(str(ident), safe="")


def resolve(config: Mapping[str, Any], api: Api, owner: str) -> str:
    """SecretZero's ``auto``: the provider's setting, GitLab CI's variables, else the project of
    the definition folder's git remote ``origin`` (for a group: that project's group)."""
    given = config.get(owner, "auto")
    if given not in (None, "", "auto"):
        return str(given)
    for key in (owner, f"{owner}_id"):
        value = api.provider.settings.get(key)
        if value not in (None, "", "auto"):
            return str(value)
    ci = os.environ.get("GITLAB_CI") == "true"
    if ci and os.environ.get("CI_PROJECT_NAMESPACE" if owner == "group" else "CI_PROJECT_PATH"):
        return os.environ["CI_PROJECT_NAMESPACE" if owner == "group" else "CI_PROJECT_PATH"]
    project = next((str(v) for k in ("project", "project_id")
                    if (v := api.provider.settings.get(k)) not in (None, "", "auto")), None)
    project = (os.environ.get("CI_PROJECT_PATH") if ci else None) or project or remote_project(api.folder)
    if project is not None and owner == "project":
        return project
    if project is not None and "/" in project:
        return project.rsplit("/", 1)[0]
    raise TargetError(f"{owner}: auto needs the provider's {owner} setting, GitLab CI's variables or a git "
                      f"remote origin on GitLab; name the {owner}")


def remote_project(folder: Path) -> str | None:
    """The ``group/project`` of the folder's git remote ``origin`` (SSH or HTTPS), as SecretZero
    reads it; the repository's own config file only (no hook or other config runs)."""
    config = folder / ".git" / "config"
    if not config.is_file():
        return None
    try:
        done = subprocess.run(["git", "config", "--file", str(config), "--get", "remote.origin.url"],  # noqa: S603, S607
                              capture_output=True, text=True, timeout=10, check=False,
                              env={"PATH": os.environ.get("PATH", ""), "GIT_CONFIG_NOSYSTEM": "1"})
    except (OSError, subprocess.SubprocessError):
        return None
    url = done.stdout.strip() if done.returncode == 0 else ""
    ssh = re.fullmatch(r"git@[^:]+:(.+?)(?:\.git)?", url)
    path = ssh.group(1) if ssh else urlsplit(url).path.removesuffix(".git") if "://" in url else ""
    return path.strip("/") or None


def expiry(config: Mapping[str, Any], now: datetime) -> str:
    return (now.astimezone(UTC) + timedelta(days=int(config.get("expires_in_days", 90)))).strftime("%Y-%m-%d")


def token_state(found: Mapping[str, Any] | None, now: datetime) -> str:
    """A token's state from GitLab's answer: revoked, expired (its date passed), else active."""
    if found is None:
        return MISSING
    if found.get("revoked"):
        return REVOKED
    expires = found.get("expires_at")
    if isinstance(expires, str) and expires[:10] < now.astimezone(UTC).strftime("%Y-%m-%d"):
        return EXPIRED
    return EXPIRED if found.get("active") is False else ACTIVE


class AccessTokens:
    """Project and group access tokens: the same API under ``/projects`` or ``/groups``."""


    def __init__(self, kind: str, owner: str, collection: str) -> None:
        self.kind = kind
        self.owner = owner  # config key: project or group
        self.collection = collection  # projects or groups
        self.description = f"A GitLab {owner} access token, created through GitLab's API (the value is the token)."
        self.options: dict[str, dict[str, Any]] = {
            owner: option("string", "auto", f"{owner.title()} path or numeric id, or auto."), **COMMON_OPTIONS,
            "access_level": option("integer", 40, "The token's role: 10, 15, 20, 30, 40 or 50."),
            "revoke_existing": option("boolean", True, "Revoke the previous token (and others of its name) once "
                                                     "the targets hold the new one."),
        }

    def validate(self, config: Mapping[str, Any], where: str, errors: list[str]) -> None:
        problems(config, where, errors, owner=self.owner, account=False)

    def issue(self, spec: GeneratorSpec, ctx: TargetContext, now: datetime,
              previous: Mapping[str, Any] | None = None) -> Issued:
        config = spec.config
        api = Api(config, ctx, self.kind)
        owner = resolve(config, api, self.owner)
        check_server_credential(ctx, f"{api.provider.kind}/{self.kind}", owner, api.server)
        body = {"name": config["token_name"], "scopes": list(config["scopes"]), "expires_at": expiry(config, now),
                "access_level": config.get("access_level", 40)}
        if config.get("description"):
            body["description"] = config["description"]
        _, made = api.call("POST", f"/{self.collection}/{quoted(owner)}/access_tokens", "token creation", (201,),
                           body, missing=f"no such {self.owner}")
        if not isinstance(made, dict) or not isinstance(made.get("token"), str) or not made["token"]:
            raise TargetError(f"{api.where}: token creation failed (the answer has no token)")
        return Issued(made["token"], {"provider": api.provider.alias, "owner": owner, "id": made.get("id"),
                                      "name": made.get("name"), "expires_at": made.get("expires_at"),
                                      "created_at": made.get("created_at")})

    def _item(self, record: Mapping[str, Any]) -> str:
        return f"/{self.collection}/{quoted(record.get('owner'))}/access_tokens/{quoted(record.get('id'))}"

    def revoke(self, record: Mapping[str, Any], ctx: TargetContext) -> None:
        api = Api(record, ctx, self.kind)
        # The lockfile is untrusted too: the server's token revokes only where it may mint.
        check_server_credential(ctx, f"{api.provider.kind}/{self.kind}", str(record.get("owner")), api.server)
        status, _ = api.call("DELETE", self._item(record), "token revocation", (204, 400, 404))
        # GitLab answers 400 for a token it cannot revoke, one already revoked among them.
        if status == 400 and self.state(record, ctx, datetime.now(UTC)) == ACTIVE:
            raise TargetError(f"{api.where}: token revocation rejected (400: the store refused the request)")

    def state(self, record: Mapping[str, Any], ctx: TargetContext, now: datetime) -> str:
        api = Api(record, ctx, self.kind)
        status, found = api.call("GET", self._item(record), "token check", (200, 404))
        return token_state(found if status == 200 and isinstance(found, dict) else None, now)

    def same_name(self, record: Mapping[str, Any], ctx: TargetContext) -> list[dict[str, Any]]:
        api = Api(record, ctx, self.kind)
        _, listed = api.call("GET", f"/{self.collection}/{quoted(record.get('owner'))}/access_tokens?state=active"
                             "&per_page=100", "token listing", (200,))
        return [{**record, "id": t.get("id"), "expires_at": t.get("expires_at")}
                for t in (listed if isinstance(listed, list) else [])
                if isinstance(t, dict) and t.get("name") == record.get("name") and t.get("id") != record.get("id")
                and not t.get("revoked")]


register(AccessTokens("gitlab_project_token", "project", "projects"))
register(AccessTokens("gitlab_group_token", "group", "groups"))
