"""A GitLab REST API v4 test server for CI/CD variables, on loopback, written from GitLab's
"Project-level CI/CD variables API" and "Group-level variables API" reference.

Covered: token check (``PRIVATE-TOKEN``; missing or wrong: 401 ``401 Unauthorized``); projects
and groups addressed by numeric id or URL-encoded path (unknown: 404 ``404 Project Not Found`` /
``404 Group Not Found``); ``GET``, ``PUT`` and ``DELETE /{projects|groups}/:id/variables/:key``
with ``filter[environment_scope]`` (several scopes of one key are distinct variables; a missing
one: 404 ``404 Variable Not Found``) and ``POST /{projects|groups}/:id/variables`` (JSON body;
a taken key and scope: 400). Attributes kept: ``value``, ``protected``, ``masked``,
``masked_and_hidden`` (a hidden variable answers ``value: null``), ``raw``,
``environment_scope``, ``variable_type``, ``description``. A masked value must be one line of
at least 8 characters without spaces (else 400), as GitLab requires.

Throttling as GitLab answers it (``throttle``): 429 ``Retry later`` with a ``Retry-After`` header
when the test names one.

Not covered: listing variables and pagination, form-encoded bodies, instance-level variables,
the full masking character rules of each GitLab version, OAuth and job tokens, token scopes and
member roles (one token can do everything), the ``RateLimit-*`` headers.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, unquote

from .http_peer import Peer

_ATTRIBUTES = {"protected": False, "masked": False, "raw": False, "variable_type": "env_var",
               "description": None, "masked_and_hidden": False}


class GitLabServer(Peer):
    def __init__(self, token: str = "glpat-test-token") -> None:
        super().__init__()
        self.token = token
        self.owners: dict[str, dict[str, int]] = {"projects": {}, "groups": {}}  # path -> id
        # (owner kind, id, key, scope) -> variable
        self.variables: dict[tuple[str, int, str, str], dict[str, Any]] = {}
        self.writes = 0  # POST and PUT answered with success

    def add(self, kind: str, path: str) -> int:
        """Create a project (``projects``) or group (``groups``) at ``path``; returns its id."""
        with self.lock:
            self.owners[kind][path] = owner_id = 100 + sum(len(o) for o in self.owners.values())
            return owner_id

    # -- what tests read and tamper with ---------------------------------------------------

    def variable(self, kind: str, path: str, key: str, scope: str = "*") -> dict[str, Any] | None:
        with self.lock:
            found = self.variables.get((kind, self.owners[kind][path], key, scope))
            return None if found is None else dict(found)

    def set_value(self, kind: str, path: str, key: str, value: str, scope: str = "*") -> None:
        with self.lock:
            self.variables[(kind, self.owners[kind][path], key, scope)]["value"] = value

    def put_variable(self, kind: str, path: str, key: str, value: str, scope: str = "*", **attributes: Any) -> None:
        """A variable someone else created (a hidden one: ``masked_and_hidden=True``)."""
        with self.lock:
            owner = self.owners[kind][path]
            self.variables[(kind, owner, key, scope)] = {
                **_ATTRIBUTES, **attributes, "key": key, "value": value, "environment_scope": scope}

    # -- the API ---------------------------------------------------------------------------

    def throttled(self, status: int) -> Any:
        return {"message": "Retry later"}

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if headers.get("PRIVATE-TOKEN") != self.token:
            return 401, {"message": "401 Unauthorized"}
        parts = path.strip("/").split("/")
        if parts[:2] != ["api", "v4"] or len(parts) < 5 or parts[2] not in self.owners or parts[4] != "variables":
            return 404, {"error": "404 Not Found"}
        kind, ident = parts[2], unquote(parts[3])
        with self.lock:
            owner = self._owner(kind, ident)
            if owner is None:
                return 404, {"message": f"404 {'Project' if kind == 'projects' else 'Group'} Not Found"}
            if len(parts) == 5 and method == "POST":
                return self._create(kind, owner, body)
            if len(parts) != 6:
                return 404, {"error": "404 Not Found"}
            key = unquote(parts[5])
            scope = parse_qs(query).get("filter[environment_scope]", ["*"])[0]
            address = (kind, owner, key, scope)
            current = self.variables.get(address)
            if current is None:
                return 404, {"message": "404 Variable Not Found"}
            if method == "GET":
                return 200, self._shown(current)
            if method == "DELETE":
                del self.variables[address]
                return 204, None
            if method == "PUT":
                return self._update(address, current, body)
        return 405, {"error": "405 Method Not Allowed"}

    def _owner(self, kind: str, ident: str) -> int | None:
        if ident.isdigit():
            return int(ident) if int(ident) in self.owners[kind].values() else None
        return self.owners[kind].get(ident)

    @staticmethod
    def _shown(variable: dict[str, Any]) -> dict[str, Any]:
        return {**variable, "value": None if variable["masked_and_hidden"] else variable["value"]}

    def _create(self, kind: str, owner: int, raw: bytes) -> tuple[int, Any]:
        body = json.loads(raw)
        key, scope = body.get("key"), body.get("environment_scope") or "*"
        if not isinstance(key, str) or not isinstance(body.get("value"), str):
            return 400, {"message": {"key": ["can't be blank"]}}
        if (kind, owner, key, scope) in self.variables:
            return 400, {"message": {"key": [f"({key}) has already been taken"]}}
        variable = {**_ATTRIBUTES, **{k: body[k] for k in _ATTRIBUTES if k in body},
                    "key": key, "value": body["value"], "environment_scope": scope}
        problem = self._invalid(variable)
        if problem:
            return 400, {"message": {"value": [problem]}}
        self.variables[(kind, owner, key, scope)] = variable
        self.writes += 1
        return 201, self._shown(variable)

    def _update(self, address: tuple[str, int, str, str], current: dict[str, Any], raw: bytes) -> tuple[int, Any]:
        body = json.loads(raw)
        updated = {**current, **{k: body[k] for k in (*_ATTRIBUTES, "value") if k in body}}
        scope = body.get("environment_scope", address[3])
        updated["environment_scope"] = scope
        problem = self._invalid(updated)
        if problem:
            return 400, {"message": {"value": [problem]}}
        del self.variables[address]
        self.variables[(address[0], address[1], address[2], scope)] = updated
        self.writes += 1
        return 200, self._shown(updated)

    @staticmethod
    def _invalid(variable: dict[str, Any]) -> str | None:
        value = variable["value"]
        if variable["masked"] and (len(value) < 8 or any(c.isspace() for c in value)):
            return "is invalid"
        return None
