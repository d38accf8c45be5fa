"""The GitLab test server with GitLab's token APIs, written from GitLab's REST API v4 reference:
"Project access tokens API", "Group access tokens API" and "Group service accounts API" (with
"Group and project members API" for a service account's memberships).

Covered, beside the CI/CD variables of ``GitLabServer`` (same ``PRIVATE-TOKEN`` check, same
project and group addressing, same 401 and 404 bodies):

- ``POST /{projects|groups}/:id/access_tokens`` (JSON: ``name`` and ``scopes`` required, ``scopes``
  from GitLab's list, ``expires_at`` a ``YYYY-MM-DD`` date after today and at most 365 days away,
  ``access_level`` one of 10, 20, 30, 40, 50 (Owner only for groups), ``description``): 201 with the
  token, its only appearance; 400 ``{"error": ...}`` / ``{"message": ...}`` otherwise;
- ``GET /{projects|groups}/:id/access_tokens[?state=active|inactive]`` and ``GET .../:token_id``
  (the token's fields without the token; a revoked one stays visible with ``revoked: true``,
  ``active: false``); ``DELETE .../:token_id``: 204, 404 for an unknown id, 400 for one already
  revoked; ``POST .../:token_id/rotate`` (the old token revoked, a new one answered);
- ``POST /groups/:id/service_accounts`` (a top-level group only, else 400), ``POST`` and ``GET
  /groups/:id/service_accounts/:user_id/personal_access_tokens``, ``DELETE`` of one (204; 404),
  ``POST .../:token_id/rotate``;
- ``POST /{projects|groups}/:id/members`` (``user_id``, ``access_level``): 201, or 409
  ``Member already exists``.

Tests read the tokens (``active``: does GitLab accept this token text now), revoke one behind the
service's back (``revoke``) and make revocations fail (``refuse_deletes``: 403, as for a token
without the Owner role).

Not covered: pagination headers (every list fits one page), the ``self_rotate`` scope's own
rotation endpoint, token prefixes set by an administrator, the ``last_used_at`` updates, user
personal access tokens (``/personal_access_tokens``), instance-level service accounts.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, unquote

from .gitlab_server import GitLabServer

SCOPES = ("api", "read_api", "read_registry", "write_registry", "read_repository", "write_repository",
          "create_runner", "manage_runner", "ai_features", "k8s_proxy", "self_rotate", "read_user", "sudo")
_SHOWN = ("id", "name", "description", "revoked", "created_at", "scopes", "user_id", "last_used_at", "active",
          "expires_at", "access_level")


class GitLabTokenServer(GitLabServer):
    def __init__(self, token: str = "glpat-test-token") -> None:
        super().__init__(token)
        self.tokens: dict[int, dict[str, Any]] = {}  # id -> token (with its owner and text)
        self.accounts: dict[int, dict[str, Any]] = {}  # service account user id -> account
        self.members: dict[tuple[str, int], dict[int, int]] = {}  # (kind, owner id) -> user id -> level
        self.refuse_deletes = False
        self._next = 1000

    # -- what tests read and tamper with ---------------------------------------------------

    def active(self, text: str) -> bool:
        """Whether GitLab accepts ``text`` as a token now (not revoked, not expired)."""
        with self.lock:
            return any(t["token"] == text and self._token_active(t) for t in self.tokens.values())

    def token_named(self, name: str) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(t) for t in self.tokens.values() if t["name"] == name]

    def revoke(self, token_id: int) -> None:
        with self.lock:
            self.tokens[token_id]["revoked"] = True

    def expire(self, token_id: int) -> None:
        with self.lock:
            self.tokens[token_id]["expires_at"] = (date.today() - timedelta(days=1)).isoformat()

    def add_token(self, kind: str, path: str, name: str) -> int:
        """A token someone created by hand (e.g. with SecretZero) at ``path``; returns its id."""
        with self.lock:
            owner = self.owners[kind][path]
            made = self._new_token(kind, owner, {"name": name, "scopes": ["api"]}, None)
            return int(made["id"])

    # -- the API ---------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        parts = path.strip("/").split("/")
        if len(parts) < 5 or parts[4] not in ("access_tokens", "service_accounts", "members"):
            return super().handle(method, path, query, headers, body)
        if headers.get("PRIVATE-TOKEN") != self.token:
            return 401, {"message": "401 Unauthorized"}
        if parts[:2] != ["api", "v4"] or parts[2] not in self.owners:
            return 404, {"error": "404 Not Found"}
        kind, ident = parts[2], unquote(parts[3])
        with self.lock:
            owner = self._owner(kind, ident)
            if owner is None:
                return 404, {"message": f"404 {'Project' if kind == 'projects' else 'Group'} Not Found"}
            payload = json.loads(body) if body else {}
            if parts[4] == "access_tokens":
                return self._access_tokens(method, kind, owner, parts[5:], query, payload)
            if parts[4] == "members":
                return self._member(method, kind, owner, parts[5:], payload)
            if kind != "groups":
                return 404, {"error": "404 Not Found"}
            return self._service_accounts(method, owner, ident, parts[5:], payload)

    def _access_tokens(self, method: str, kind: str, owner: int, rest: list[str], query: str,
                       payload: dict[str, Any]) -> tuple[int, Any]:
        if not rest and method == "POST":
            return self._create_token(kind, owner, payload, None)
        if not rest and method == "GET":
            wanted = parse_qs(query).get("state", [None])[0]
            listed = [t for t in self.tokens.values() if t["owner"] == (kind, owner) and t["user_id"] is None]
            if wanted is not None:
                listed = [t for t in listed if self._token_active(t) == (wanted == "active")]
            return 200, [self._shown_token(t) for t in listed]
        return self._one(method, rest, (kind, owner), None, payload)

    def _service_accounts(self, method: str, owner: int, ident: str, rest: list[str],
                          payload: dict[str, Any]) -> tuple[int, Any]:
        if "/" in ident or not any(p == ident or i == owner for p, i in self.owners["groups"].items() if "/" not in p):
            return 400, {"message": "400 Bad request - Group must be a top-level group"}
        if not rest and method == "POST":
            self._next += 1
            name = payload.get("name") or "Service account user"
            account = {"id": self._next, "name": name, "username": f"service_account_group_{owner}_{self._next}",
                       "email": f"service_account_{self._next}@noreply.gitlab.example"}
            self.accounts[self._next] = {**account, "group": owner}
            return 201, account
        if len(rest) < 2 or not rest[0].isdigit() or rest[1] != "personal_access_tokens":
            return 404, {"error": "404 Not Found"}
        user = int(rest[0])
        if self.accounts.get(user, {}).get("group") != owner:
            return 404, {"message": "404 User Not Found"}
        if len(rest) == 2 and method == "POST":
            return self._create_token("groups", owner, payload, user)
        if len(rest) == 2 and method == "GET":
            return 200, [self._shown_token(t) for t in self.tokens.values() if t["user_id"] == user]
        return self._one(method, rest[2:], ("groups", owner), user, payload)

    def _one(self, method: str, rest: list[str], owner: tuple[str, int], user: int | None,
             payload: dict[str, Any]) -> tuple[int, Any]:
        if not rest[0].isdigit() or len(rest) > 2 or (len(rest) == 2 and rest[1] != "rotate"):
            return 404, {"error": "404 Not Found"}
        found = self.tokens.get(int(rest[0]))
        if found is None or found["owner"] != owner or found["user_id"] != user:
            return 404, {"message": "404 Not Found"}
        if len(rest) == 2 and method == "POST":
            if not self._token_active(found):
                return 400, {"message": "400 Bad request - Token already revoked"}
            found["revoked"] = True
            return self._create_token(owner[0], owner[1], {**found, "expires_at": payload.get("expires_at")}, user,
                                status=200)
        if method == "GET":
            return 200, self._shown_token(found)
        if method == "DELETE":
            if self.refuse_deletes:
                return 403, {"message": "403 Forbidden"}
            if found["revoked"]:
                return 400, {"message": "400 Bad request"}
            found["revoked"] = True
            return 204, None
        return 405, {"error": "405 Method Not Allowed"}

    def _member(self, method: str, kind: str, owner: int, rest: list[str], payload: dict[str, Any]) -> tuple[int, Any]:
        if rest or method != "POST":
            return 404, {"error": "404 Not Found"}
        user, level = payload.get("user_id"), payload.get("access_level")
        if not isinstance(user, int) or level not in (10, 15, 20, 30, 40, 50):
            return 400, {"message": "access_level does not have a valid value"}
        members = self.members.setdefault((kind, owner), {})
        if user in members:
            return 409, {"message": "Member already exists"}
        members[user] = level
        return 201, {"id": user, "access_level": level}

    def _create_token(self, kind: str, owner: int, payload: dict[str, Any], user: int | None,
                status: int = 201) -> tuple[int, Any]:
        if not isinstance(payload.get("name"), str) or not payload["name"]:
            return 400, {"error": "name is missing"}
        scopes = payload.get("scopes")
        if not isinstance(scopes, list) or not scopes:
            return 400, {"error": "scopes is missing"}
        if any(scope not in SCOPES for scope in scopes):
            return 400, {"error": "scopes does not have a valid value"}
        expires = payload.get("expires_at")
        if expires is not None:
            try:
                day = date.fromisoformat(expires)
            except (TypeError, ValueError):
                return 400, {"error": "expires_at is invalid"}
            if not date.today() < day <= date.today() + timedelta(days=365):
                return 400, {"message": {"expires_at": ["must be in the future and at most 365 days away"]}}
        level = payload.get("access_level", 40)
        if user is None and (level not in (10, 20, 30, 40, 50) or (level == 50 and kind == "projects")):
            return 400, {"error": "access_level does not have a valid value"}
        made = self._new_token(kind, owner, payload, user)
        return status, {**self._shown_token(made), "token": made["token"]}

    def _new_token(self, kind: str, owner: int, payload: dict[str, Any], user: int | None) -> dict[str, Any]:
        self._next += 1
        made = {"id": self._next, "name": payload["name"], "description": payload.get("description"),
                "revoked": False, "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                "scopes": list(payload["scopes"]), "user_id": user, "last_used_at": None,
                "expires_at": payload.get("expires_at") or (date.today() + timedelta(days=365)).isoformat(),
                "access_level": None if user is not None else payload.get("access_level", 40),
                "owner": (kind, owner), "token": "glpat-" + secrets.token_urlsafe(15)}
        self.tokens[self._next] = made
        return made

    @staticmethod
    def _token_active(token: dict[str, Any]) -> bool:
        return not token["revoked"] and date.fromisoformat(token["expires_at"]) >= date.today()

    def _shown_token(self, token: dict[str, Any]) -> dict[str, Any]:
        shown = {key: token[key] for key in _SHOWN if key != "active"}
        shown["active"] = self._token_active(token)
        if token["user_id"] is not None:
            shown.pop("access_level")
        return shown
