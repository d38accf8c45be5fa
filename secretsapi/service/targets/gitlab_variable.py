"""``gitlab/gitlab_variable`` and ``gitlab/gitlab_group_variable``: GitLab CI/CD variables.

Through GitLab's REST API v4: ``GET /projects/<id>/variables/<key>`` (or ``/groups/<id>/...``)
with ``filter[environment_scope]``, then ``POST`` to create it or ``PUT`` to update it, only
when its value or attributes differ. Other variables are never touched. Attributes: ``masked``
(SecretZero's default: true), ``protected``, ``raw``, ``environment_scope`` (``*``),
``variable_type`` (``env_var`` or ``file``), ``description``.

GitLab gives values back, so drift compares them; a hidden variable (``masked_and_hidden``)
answers without its value and is reported as unverifiable (GitLab keeps no update time).

Target id: SecretZero's (``secretzero_ids.recorded_id``), usually ``<provider>/<kind>/``; where
another target of the same secret would share it, this kind's own:
``<provider>/<kind>/<project or group>``, then ``/<key>`` when the config names it
(else the secret's own name is the key), then ``@<environment_scope>`` when it is not ``*``.

Provider settings: ``token`` or ``token_file`` under auth (else GITLAB_TOKEN, then
GITLAB_PRIVATE_TOKEN), ``url`` (``base_url``; else GITLAB_URL, then CI_SERVER_URL, else
https://gitlab.com: a self-managed instance's address), ``timeout`` (5 s), ``max_concurrency``
(8). 429 answers are retried after GitLab's ``Retry-After`` (``rest``). GITLAB_TOKEN is the
server's: with it, a ``url`` the definition names must be gitlab.com or one the operator lists
(``egress``); GITLAB_URL and CI_SERVER_URL are the operator's own.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.ids import RecordsSecretZeroIds
from secretsapi.service.targets.providers import CONCURRENCY, TIMEOUT, VERIFY, checked_provider, provider_of
from secretsapi.service.targets.remote import checked_group, collect, same_config
from secretsapi.service.targets.rest import base_url, json_body, request, session, status_error, tls_verify
from secretsapi.service.targets.schema import AuthKind, KindSchema, ProviderSchema, Setting
from secretsapi.service.util.hashing import sha256_text

DEFAULT_URL = "https://gitlab.com"
GITLAB = ProviderSchema(
    "gitlab", "GitLab",
    "GitLab's REST API v4 (gitlab.com or a self-managed instance); GITLAB_TOKEN and GITLAB_URL (then "
    "CI_SERVER_URL) by default.",
    config={
        "url": Setting("string", "instance address (alias: base_url)", DEFAULT_URL),
        "verify": VERIFY,
        "timeout": TIMEOUT,
        "max_concurrency": CONCURRENCY,
    },
    auth_kinds=tuple(AuthKind(name) for name in ("token", "env", "ambient")),
    auth_config={
        "token": Setting("string", "personal, group or project access token (api scope)"),
        "token_file": Setting("string", "file holding the token"),
    },
    hosted=(DEFAULT_URL,),
    addressed=True,
)
PROVIDERS = (GITLAB,)
VARIABLE_TYPES = ("env_var", "file")
DEFAULT_SCOPE = "*"
# (config key, default) of the attributes written with every value: SecretZero's defaults.
_FLAGS = (("protected", False), ("masked", True), ("raw", False))
_SHARED = ("protected", "masked", "raw", "variable_type", "description")


def _key(placement: Placement) -> str:
    return str(placement.target.config.get("key") or placement.key)


def _scope_of(target: TargetSpec) -> str:
    return str(target.config.get("environment_scope") or DEFAULT_SCOPE)


def _attributes(config: Mapping[str, Any]) -> dict[str, Any]:
    attributes: dict[str, Any] = {name: bool(config.get(name, default)) for name, default in _FLAGS}
    attributes["variable_type"] = config.get("variable_type") or "env_var"
    if config.get("description") is not None:
        attributes["description"] = config["description"]
    return attributes


def _schema(type_: str, owner_key: str) -> KindSchema:
    return KindSchema(
        type_,
        f"A GitLab CI/CD variable of a {owner_key}; its other variables are kept. Written only when its value "
        "or attributes differ.",
        {
            owner_key: Setting("string|integer", f"{owner_key} path (e.g. team/app) or numeric id", required=True),
            "key": Setting("string", "variable key; the secret (or template field) name by default"),
            "masked": Setting("boolean", "mask the value in job logs", True),
            "protected": Setting("boolean", "expose only to protected branches and tags", False),
            "raw": Setting("boolean", "do not expand $ references", False),
            "environment_scope": Setting("string", "environments the variable applies to", DEFAULT_SCOPE),
            "variable_type": Setting("string", "env_var or file", "env_var", choices=VARIABLE_TYPES),
            "description": Setting("string", "variable description"),
        },
        target_id=f"SecretZero's, e.g. `{type_}/`; own: `{type_}/<{owner_key}>[/<key>][@<scope>]`",
        example={owner_key: "team/app" if owner_key == "project" else "team"},
    )


class _GitLabVariableKind(RecordsSecretZeroIds, Kind):
    owner_key: str  # "project" or "group"
    owner_path: str  # "projects" or "groups"

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        return provider_of(target, ctx).token(ctx) is None

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        key, scope = target.config.get("key"), _scope_of(target)
        return (f"{target.config.get(self.owner_key)}" + (f"/{key}" if key else "")
                + ("" if scope == DEFAULT_SCOPE else f"@{scope}"))

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, target.provider, str(target.config.get(self.owner_key)), _scope_of(target))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        if not items:
            return {}
        target = items[0][0].target
        where = checked_group(self, [p.target for p, _ in items], self._group_name(target), ctx)
        attributes = _attributes(same_config([p for p, _ in items], _SHARED, where))
        values = collect(items, _key, where)
        api = _Api(self, target, ctx, where)
        scope = _scope_of(target)
        for key, value in values.items():
            wanted = {"value": value, **attributes, "environment_scope": scope}
            current = api.variable(key, scope, "write")
            if current is None:
                api.send("POST", api.collection, {"key": key, **wanted}, (201,))
            # An attribute the instance does not answer with (older versions: raw, description)
            # is one it does not keep either: only those it shows are compared.
            elif any(name in current and current[name] != setting for name, setting in wanted.items()):
                api.send("PUT", api.item(key, scope), wanted, (200,))
        return {p.key: sha256_text(values[_key(p)]) for p, _ in items}

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        target = items[0].target
        where = checked_group(self, [p.target for p in items], self._group_name(target), ctx)
        api = _Api(self, target, ctx, where)
        scope = _scope_of(target)
        backs = {}
        for placement in items:
            key = _key(placement)
            location = f"{target.config.get(self.owner_key)}/{key}" + ("" if scope == DEFAULT_SCOPE else f"@{scope}")
            current = api.variable(key, scope, "read")
            if current is None:
                backs[placement.key] = ReadBack(False, None, location)
            elif not isinstance(current.get("value"), str):  # hidden: GitLab never shows it again
                backs[placement.key] = ReadBack(True, None, location, verifiable=False)
            else:
                value = current["value"]
                backs[placement.key] = ReadBack(True, sha256_text(value), location, value)
        return backs

    def _group_name(self, target: TargetSpec) -> str:
        scope = _scope_of(target)
        return f"{target.config.get(self.owner_key)}" + ("" if scope == DEFAULT_SCOPE else f"@{scope}")


class GitLabVariableKind(_GitLabVariableKind):
    schema = _schema("gitlab/gitlab_variable", "project")
    owner_key = "project"
    owner_path = "projects"


class GitLabGroupVariableKind(_GitLabVariableKind):
    schema = _schema("gitlab/gitlab_group_variable", "group")
    owner_key = "group"
    owner_path = "groups"


class _Api:
    """One group's calls: the instance URL, the token, GitLab's throttling and its errors."""

    def __init__(self, kind: _GitLabVariableKind, target: TargetSpec, ctx: TargetContext, where: str) -> None:
        provider = checked_provider(target, ctx, GITLAB)
        own = provider.token(ctx)
        token = own or os.environ.get("GITLAB_TOKEN") or os.environ.get("GITLAB_PRIVATE_TOKEN")
        if not token:
            raise TargetError(f"provider '{provider.alias}': no GitLab token (set token or token_file in "
                              "the provider's auth, or GITLAB_TOKEN)")
        address = provider.address(ctx, GITLAB, provider.text("url", "base_url"),
                                   os.environ.get("GITLAB_URL") or os.environ.get("CI_SERVER_URL"), DEFAULT_URL,
                                   server_credential=None if own else "the server's GITLAB_TOKEN")
        url = base_url(str(address), provider.alias, "url")
        owner = quote(str(target.config.get(kind.owner_key)), safe="")
        self.collection = f"{url}/api/v4/{kind.owner_path}/{owner}/variables"
        self.timeout = provider.timeout
        self.where = where
        self.http = session((url, token), {"PRIVATE-TOKEN": token, "User-Agent": "secretsapi"}, kind.type,
                            tls_verify(provider, ctx))

    def item(self, key: str, scope: str) -> str:
        return f"{self.collection}/{quote(key, safe='')}?filter%5Benvironment_scope%5D={quote(scope, safe='')}"

    def variable(self, key: str, scope: str, operation: str) -> dict[str, Any] | None:
        response = request(self.http, "GET", self.item(key, scope), where=self.where, operation=operation,
                           timeout=self.timeout)
        if response.status_code == 404:
            # A missing project answers 404 too: tell them apart before creating the variable.
            body = json_body(response, self.where, operation) if response.content else {}
            message = body.get("message") if isinstance(body, dict) else None
            if isinstance(message, str) and "Variable" not in message:
                raise status_error(response, self.where, operation, "no such project or group")
            return None
        if response.status_code != 200:
            raise status_error(response, self.where, operation, "no such project or group")
        body = json_body(response, self.where, operation)
        if not isinstance(body, dict):
            raise TargetError(f"{self.where}: {operation} failed (unexpected answer)")
        return body

    def send(self, method: str, url: str, body: dict[str, Any], ok: tuple[int, ...]) -> None:
        response = request(self.http, method, url, where=self.where, operation="write", timeout=self.timeout,
                           json=body)
        if response.status_code not in ok:
            raise status_error(response, self.where, "write", "no such project or group")


KINDS = (GitLabVariableKind(), GitLabGroupVariableKind())
