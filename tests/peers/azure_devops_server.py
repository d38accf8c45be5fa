"""An Azure DevOps Services test server for the PAT lifecycle management API, on loopback,
written from Microsoft's "Pats" REST reference (Tokens, api-version 7.1-preview.1):
``https://vssps.dev.azure.com/{organization}/_apis/tokens/pats``.

Covered: authentication by Microsoft Entra access token only (``Authorization: Bearer <jwt>``;
a PAT sent as basic auth, or no header, is refused with 401, as the reference says PATs cannot
call this API); the ``api-version`` query parameter (missing or another: 400); the organization
in the path (another: 404); ``POST`` (JSON ``displayName``, ``scope`` as a space-separated string,
``validTo``, ``allOrgs``) answering 200 ``{"patToken": {...with token}, "patTokenError": "none"}``,
or 400 with the error name (``invalidDisplayName``, ``invalidScope``, ``invalidValidTo``) and
``patToken`` null; ``GET ?authorizationId=`` (the token without its value; unknown: 404);
``DELETE ?authorizationId=`` (204; unknown: 404). A token's default lifetime is 30 days.

Tests read whether a token works (``active``), revoke one behind the service's back (``revoke``)
and refuse revocations (``refuse_deletes``: 403).

Not covered: listing (``GET`` without ``authorizationId``, its paging), ``PUT`` (update), the
organization's PAT policies (maximum lifetime, full-scope ban), ``allOrgs`` targets.
"""

from __future__ import annotations

import json
import secrets
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs

from .http_peer import Peer

ACCESS_TOKEN = "eyJ0eXAiOiJKV1QifQ.eyJhdWQiOiI0OTliODRhYy0xMzIxIn0.c2lnbmF0dXJl"  # the shape of an Entra JWT
SCOPES = ("vso.code", "vso.code_write", "vso.build", "vso.build_execute", "vso.packaging", "vso.variablegroups_read",
          "vso.variablegroups_manage", "vso.work", "vso.profile", "app_token")


def _time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class AzureDevOpsServer(Peer):
    def __init__(self, organization: str = "myorg", access_token: str = ACCESS_TOKEN) -> None:
        super().__init__()
        self.organization = organization
        self.access_token = access_token
        self.tokens: dict[str, dict[str, Any]] = {}  # authorizationId -> token (with its value)
        self.refuse_deletes = False

    def active(self, text: str) -> bool:
        now = datetime.now(UTC)
        with self.lock:
            return any(t["token"] == text and datetime.fromisoformat(t["validTo"].replace("Z", "+00:00")) > now
                       for t in self.tokens.values())

    def revoke(self, authorization_id: str) -> None:
        with self.lock:
            del self.tokens[authorization_id]

    def named(self, name: str) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(t) for t in self.tokens.values() if t["displayName"] == name]

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if headers.get("Authorization") != f"Bearer {self.access_token}":
            return 401, {"message": "TF400813: The user is not authorized to access this resource."}
        if path.strip("/").split("/") != [self.organization, "_apis", "tokens", "pats"]:
            return 404, {"message": "The resource cannot be found."}
        params = parse_qs(query)
        if params.get("api-version") != ["7.1-preview.1"]:
            return 400, {"message": "The requested REST API version is not supported."}
        wanted = params.get("authorizationId", [None])[0]
        with self.lock:
            if method == "POST":
                return self._create(json.loads(body or b"{}"))
            found = self.tokens.get(wanted) if wanted else None
            if found is None or wanted is None:
                return 404, {"message": "The requested PAT could not be found."}
            if method == "GET":
                return 200, {"patToken": {k: v for k, v in found.items() if k != "token"}, "patTokenError": "none"}
            if method == "DELETE":
                if self.refuse_deletes:
                    return 403, {"message": "Access denied."}
                del self.tokens[wanted]
                return 204, None
        return 405, {"message": "Method not allowed."}

    def _create(self, payload: dict[str, Any]) -> tuple[int, Any]:
        name, scope = payload.get("displayName"), payload.get("scope")
        if not isinstance(name, str) or not name:
            return 400, {"patToken": None, "patTokenError": "invalidDisplayName"}
        if not isinstance(scope, str) or not scope or any(s not in SCOPES for s in scope.split(" ")):
            return 400, {"patToken": None, "patTokenError": "invalidScope"}
        now = datetime.now(UTC)
        valid_to = now + timedelta(days=30)
        if payload.get("validTo") is not None:
            try:
                valid_to = datetime.fromisoformat(str(payload["validTo"]).replace("Z", "+00:00"))
            except ValueError:
                return 400, {"patToken": None, "patTokenError": "invalidValidTo"}
            if valid_to.tzinfo is None:
                valid_to = valid_to.replace(tzinfo=UTC)
            if valid_to <= now:
                return 400, {"patToken": None, "patTokenError": "invalidValidTo"}
        made: dict[str, Any] = {
                "displayName": name, "validTo": _time(valid_to), "scope": scope,
                "targetAccounts": [str(uuid.uuid4())], "validFrom": _time(now), "authorizationId": str(uuid.uuid4()),
                "token": secrets.token_urlsafe(39)}
        self.tokens[str(made["authorizationId"])] = made
        return 200, {"patToken": made, "patTokenError": "none"}
