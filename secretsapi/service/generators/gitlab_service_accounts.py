"""``gitlab_group_service_account``: a GitLab group service account and a personal access token
of it, through GitLab's "Group service accounts API", as SecretZero's generator creates them.

The account is created once (``POST /groups/:top/service_accounts``, ``:top`` the top-level group
of ``group``: its first path segment, as SecretZero derives it without a lookup) and kept: its user
id is in the lockfile record, so a rotation makes a new token for the same account (SecretZero
creates an account each time unless ``service_account_user_id`` is set, which is honoured too).
The token: ``POST /groups/:top/service_accounts/:user/personal_access_tokens``; its state: that
list; revoking: ``DELETE`` of it. ``memberships`` (``resource_type`` group or project, ``resource``
a path, ``auto`` for the provider's project, ``access_level`` 30) are added after each token
(``POST .../members``; "already a member" is fine). The value is the token text: SecretZero's
generator returns the account's facts as JSON and its remote targets store the ``token`` field;
here the other facts are in the lockfile record.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from secretsapi.service.definition.model import GeneratorSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.generators.gitlab_tokens import (
    COMMON_OPTIONS,
    Api,
    expiry,
    problems,
    quoted,
    resolve,
    token_state,
)
from secretsapi.service.generators.tokens import ACTIVE, MISSING, Issued, check_server_credential, option, register
from secretsapi.service.targets.base import TargetContext


class ServiceAccounts:
    kind = "gitlab_group_service_account"
    description = ("A GitLab group service account (created once) and a personal access token of it, "
                   "through GitLab's API (the value is the token).")

    def __init__(self) -> None:
        self.options: dict[str, dict[str, Any]] = {
            "group": option("string", "auto", "Group path or numeric id (its top-level group holds the account), "
                                            "or auto."),
            "service_account_name": option("string", None, "The service account's name (required)."),
            **COMMON_OPTIONS,
            "rotate_existing": option("boolean", True, "Revoke the previous token once the targets hold the new one."),
            "memberships": option("array", None, "Groups and projects the account joins: "
                                               "[{resource_type: group|project, resource, access_level}]."),
            "service_account_user_id": option("integer", None, "An existing service account's user id to use."),
            "token_id": option("integer", None, "SecretZero's id of a token to rotate (the recorded one is used)."),
        }

    def validate(self, config: Mapping[str, Any], where: str, errors: list[str]) -> None:
        problems(config, where, errors, owner="group", account=True)

    def issue(self, spec: GeneratorSpec, ctx: TargetContext, now: datetime,
              previous: Mapping[str, Any] | None = None) -> Issued:
        config = spec.config
        api = Api(config, ctx, self.kind)
        group = resolve(config, api, "group")
        top = group.strip("/").split("/")[0]
        check_server_credential(ctx, f"{api.provider.kind}/{self.kind}", group, api.server)
        user, username = self._account(config, api, top, previous)
        body: dict[str, Any] = {"name": config["token_name"], "scopes": list(config["scopes"]),
                                "expires_at": expiry(config, now)}
        if config.get("description"):
            body["description"] = config["description"]
        _, made = api.call("POST", f"/groups/{quoted(top)}/service_accounts/{user}/personal_access_tokens",
                           "token creation", (201,), body, missing="no such group or service account")
        if not isinstance(made, dict) or not isinstance(made.get("token"), str) or not made["token"]:
            raise TargetError(f"{api.where}: token creation failed (the answer has no token)")
        record = {"provider": api.provider.alias, "owner": top, "group": group, "user_id": user, "username": username,
                  "id": made.get("id"), "name": made.get("name"), "expires_at": made.get("expires_at"),
                  "created_at": made.get("created_at")}
        try:
            self._join(config, api, user)
        except Exception:
            self.revoke(record, ctx)  # no target will hold it: it must not stay valid
            raise
        return Issued(made["token"], record)

    def _account(self, config: Mapping[str, Any], api: Api, top: str,
                 previous: Mapping[str, Any] | None) -> tuple[int, str | None]:
        given = config.get("service_account_user_id")
        if isinstance(given, int) and not isinstance(given, bool):
            return given, None
        if previous is not None and previous.get("owner") == top and isinstance(previous.get("user_id"), int):
            return int(previous["user_id"]), previous.get("username")
        _, made = api.call("POST", f"/groups/{quoted(top)}/service_accounts", "service account creation", (201,),
                           {"name": config["service_account_name"]}, missing="no such group")
        if not isinstance(made, dict) or not isinstance(made.get("id"), int):
            raise TargetError(f"{api.where}: service account creation failed (the answer has no user id)")
        return int(made["id"]), made.get("username")

    def _join(self, config: Mapping[str, Any], api: Api, user: int) -> None:
        for membership in config.get("memberships") or []:
            kind = membership["resource_type"]
            resource = membership.get("resource")
            if resource in (None, "", "auto"):
                resource = resolve({"project" if kind == "project" else "group": "auto"}, api, kind)
            collection = "projects" if kind == "project" else "groups"
            api.call("POST", f"/{collection}/{quoted(resource)}/members", "membership", (201, 409),
                     {"user_id": user, "access_level": int(membership.get("access_level", 30))},
                     missing=f"no such {kind}")

    def _tokens(self, record: Mapping[str, Any], ctx: TargetContext) -> tuple[Api, list[dict[str, Any]]]:
        api = Api(record, ctx, self.kind)
        path = f"/groups/{quoted(record.get('owner'))}/service_accounts/{quoted(record.get('user_id'))}"
        status, listed = api.call("GET", f"{path}/personal_access_tokens?per_page=100", "token listing",
                                  (200, 404))
        return api, [t for t in (listed if status == 200 and isinstance(listed, list) else []) if isinstance(t, dict)]

    def revoke(self, record: Mapping[str, Any], ctx: TargetContext) -> None:
        api = Api(record, ctx, self.kind)
        # The lockfile is untrusted too: the server's token revokes only where it may mint.
        group = str(record.get("group"))
        if record.get("owner") != group.strip("/").split("/")[0]:
            raise TargetError(f"{api.where}: the lockfile's record of the token does not hold together")
        check_server_credential(ctx, f"{api.provider.kind}/{self.kind}", group, api.server)
        path = (f"/groups/{quoted(record.get('owner'))}/service_accounts/{quoted(record.get('user_id'))}"
                f"/personal_access_tokens/{quoted(record.get('id'))}")
        status, _ = api.call("DELETE", path, "token revocation", (204, 400, 404))
        if status == 400 and self.state(record, ctx, datetime.now(UTC)) == ACTIVE:
            raise TargetError(f"{api.where}: token revocation rejected (400: the store refused the request)")

    def state(self, record: Mapping[str, Any], ctx: TargetContext, now: datetime) -> str:
        _, tokens = self._tokens(record, ctx)
        found = next((t for t in tokens if t.get("id") == record.get("id")), None)
        return token_state(found, now) if found is not None else MISSING

    def same_name(self, record: Mapping[str, Any], ctx: TargetContext) -> list[dict[str, Any]]:
        _, tokens = self._tokens(record, ctx)
        return [{**record, "id": t.get("id"), "expires_at": t.get("expires_at")} for t in tokens
                if t.get("name") == record.get("name") and t.get("id") != record.get("id") and not t.get("revoked")]


register(ServiceAccounts())
