"""An Infisical REST API test server for secrets, on loopback, written from Infisical's API reference
("Secrets": Retrieve, Create and Update under ``/api/v3/secrets/raw/{secretName}``, and "Universal
Auth": Login).

Covered: ``Authorization: Bearer <token>`` on every secrets call (the static token, or an access
token a login issued; missing or wrong: 401 ``UnauthorizedError``); ``POST
/api/v1/auth/universal-auth/login`` (JSON ``clientId``, ``clientSecret``; answers ``accessToken``,
``expiresIn``, ``accessTokenMaxTTL``, ``tokenType``; wrong credentials: 401); ``GET`` with the query
``workspaceId``, ``environment``, ``secretPath`` (default ``/``, trailing slash removed), ``type``
(``shared``); ``POST`` and ``PATCH`` with the same fields in a JSON body plus ``secretValue`` (the
value trimmed as Infisical trims it, keeping a final newline). A project, environment or folder
that does not exist, or a missing secret: 404 ``NotFound``; creating a secret that exists: 400
``BadRequest``. Each secret keeps ``version``, ``createdAt`` and ``updatedAt``. A secret can be
hidden from the token (``hide``: ``secretValueHidden`` true and a masked value, as for a token
without the read-value permission), and an environment can hold writes for approval
(``require_approval``: POST and PATCH answer ``approval`` and store nothing).

Throttling as Infisical's rate limiter answers it (``throttle``): 429 ``Too Many Requests`` with a
``Retry-After`` header when the test names one.

Not covered: the v4 secrets endpoints, listing, deleting and batch endpoints, secret references
(``${...}`` expansion) and imports, personal secrets, tags, metadata, comments and reminders,
folder management, workspace slugs, service-token scopes, the other identity auth methods,
access-token expiry and TTL renewal, per-permission checks (one token can do everything).
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, unquote

from .http_peer import Peer

HIDDEN = "<hidden-by-infisical>"


def _error(status: int, error: str, message: str) -> tuple[int, Any]:
    return status, {"reqId": "req-test", "statusCode": status, "message": message, "error": error}


def _trimmed(value: str) -> str:
    return value.strip() + "\n" if value.endswith("\n") else value.strip()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class InfisicalServer(Peer):
    def __init__(self, token: str = "inf-test-token", client_id: str = "identity-client-id",
                 client_secret: str = "identity-client-s3cret") -> None:
        super().__init__()
        self.token = token
        self.client_id, self.client_secret = client_id, client_secret
        self.access_tokens: set[str] = set()  # issued by logins
        self.logins = 0
        # workspace id -> environment slug -> folder paths
        self.projects: dict[str, dict[str, set[str]]] = {}
        # (workspace, environment, path, name) -> secret
        self.secrets: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        self.hidden: set[tuple[str, str, str, str]] = set()
        self.approvals: set[tuple[str, str]] = set()  # (workspace, environment) holding writes
        self.writes = 0  # POST and PATCH answered with success

    # -- what tests set up, read and tamper with --------------------------------------------

    def add_project(self, workspace: str, environments: tuple[str, ...] = ("dev", "staging", "prod"),
                    folders: tuple[str, ...] = ()) -> None:
        with self.lock:
            self.projects[workspace] = {env: {"/", *folders} for env in environments}

    def value(self, workspace: str, environment: str, name: str, path: str = "/") -> str | None:
        with self.lock:
            found = self.secrets.get((workspace, environment, path, name))
            return None if found is None else str(found["secretValue"])

    def put(self, workspace: str, environment: str, name: str, value: str, path: str = "/") -> None:
        """A secret written by someone else (or a changed value)."""
        with self.lock:
            self._store((workspace, environment, path, name), value)

    def remove(self, workspace: str, environment: str, name: str, path: str = "/") -> None:
        with self.lock:
            del self.secrets[(workspace, environment, path, name)]

    def hide(self, workspace: str, environment: str, name: str, path: str = "/") -> None:
        with self.lock:
            self.hidden.add((workspace, environment, path, name))

    def require_approval(self, workspace: str, environment: str) -> None:
        with self.lock:
            self.approvals.add((workspace, environment))

    def revoke_access_tokens(self) -> None:
        with self.lock:
            self.access_tokens.clear()

    # -- the API ---------------------------------------------------------------------------

    def throttled(self, status: int) -> Any:
        return {"statusCode": status, "error": "Too Many Requests", "message": "Rate limit exceeded, retry in 1 minute"}

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if path == "/api/v1/auth/universal-auth/login" and method == "POST":
            return self._login(body)
        prefix = "/api/v3/secrets/raw/"
        if not path.startswith(prefix) or len(path) == len(prefix):
            return _error(404, "NotFound", f"Route {method}:{path} not found")
        authorization = headers.get("Authorization") or ""
        with self.lock:
            bearer = authorization.removeprefix("Bearer ")
            if not authorization.startswith("Bearer ") or (bearer != self.token and bearer not in self.access_tokens):
                return _error(401, "UnauthorizedError", "Invalid token")
            name = unquote(path[len(prefix):])
            if method == "GET":
                fields = {k: v[0] for k, v in parse_qs(query).items()}
            elif method in ("POST", "PATCH"):
                fields = json.loads(body or b"{}")
            else:
                return _error(404, "NotFound", f"Route {method}:{path} not found")
            return self._secret(method, name, fields)

    def _login(self, body: bytes) -> tuple[int, Any]:
        fields = json.loads(body or b"{}")
        with self.lock:
            if (fields.get("clientId"), fields.get("clientSecret")) != (self.client_id, self.client_secret):
                return _error(401, "UnauthorizedError", "Invalid credentials")
            token = f"inf-access-{secrets.token_hex(8)}"
            self.access_tokens.add(token)
            self.logins += 1
        return 200, {"accessToken": token, "expiresIn": 7200, "accessTokenMaxTTL": 43200, "tokenType": "Bearer"}

    def _secret(self, method: str, name: str, fields: dict[str, Any]) -> tuple[int, Any]:
        workspace, environment = fields.get("workspaceId"), fields.get("environment")
        folder = "/" + str(fields.get("secretPath") or "/").strip().strip("/")
        if fields.get("type", "shared") != "shared":
            return _error(400, "BadRequest", "Only shared secrets are served here")
        if workspace not in self.projects:
            return _error(404, "NotFound", f"Project with ID '{workspace}' not found")
        if environment not in self.projects[workspace]:
            return _error(404, "NotFound", f"Environment with slug '{environment}' not found")
        if folder not in self.projects[workspace][environment]:
            return _error(404, "NotFound", f"Folder with path '{folder}' in environment with slug '{environment}' "
                                           "not found")
        address = (workspace, environment, folder, name)
        current = self.secrets.get(address)
        if method == "GET":
            if current is None:
                return _error(404, "NotFound", f"Secret with name '{name}' not found")
            if address in self.hidden:
                return 200, {"secret": {**current, "secretValue": HIDDEN, "secretValueHidden": True}}
            return 200, {"secret": current}
        value = fields.get("secretValue")
        if not isinstance(value, str):
            return _error(400, "BadRequest", "secretValue: Required")
        if method == "POST" and current is not None:
            return _error(400, "BadRequest", "Secret already exist")
        if method == "PATCH" and current is None:
            return _error(404, "NotFound", f"Secret with name '{name}' not found")
        if (workspace, environment) in self.approvals:
            return 200, {"approval": {"id": "approval-1", "slug": "approval-1", "status": "open"}}
        self.writes += 1
        return 200, {"secret": self._store(address, value)}

    def _store(self, address: tuple[str, str, str, str], value: str) -> dict[str, Any]:
        workspace, environment, folder, name = address
        current = self.secrets.get(address)
        now = _now()
        stored = {
            "id": current["id"] if current else secrets.token_hex(12),
            "workspace": workspace, "environment": environment, "secretPath": folder,
            "version": current["version"] + 1 if current else 1, "type": "shared",
            "secretKey": name, "secretValue": _trimmed(value), "secretComment": "",
            "secretValueHidden": False,
            "createdAt": current["createdAt"] if current else now, "updatedAt": now,
        }
        self.secrets[address] = stored
        return stored
