"""A Vercel REST API test server: the project environment variable endpoints, on loopback.

Written from Vercel's public REST API reference (projects: environment variables).

Covered: bearer token check (missing or wrong: 403 ``forbidden``, ``invalidToken``); the team
(``teamId`` query) a project belongs to (another team or none: 404 ``not_found``); projects by id
or name; ``GET /v10/projects/<project>/env`` (every variable, values withheld as the list does
for encrypted ones); ``GET /v1/projects/<project>/env/<id>`` (one variable, value decrypted);
``POST /v10/projects/<project>/env`` (one variable: ``key``, ``value``, ``type``, ``target``,
``gitBranch``; a key already set for one of the targets is 400 ``ENV_CONFLICT`` unless
``upsert=true``, which replaces it); ``PATCH /v9/projects/<project>/env/<id>`` (``value``,
``target``, ``type``, ``key``); ``DELETE /v9/projects/<project>/env/<id>``; targets limited to
``production``, ``preview`` and ``development`` (else 400 ``bad_request``).

Throttling as Vercel answers it (``rate_limit``): 429 ``rate_limited`` with X-RateLimit-Limit,
X-RateLimit-Remaining (0) and X-RateLimit-Reset (epoch seconds), and Retry-After when the test
names one.

Not covered: pagination (every variable comes in one page), a body with several variables,
``sensitive`` variables' write-only values, custom environments, ``comment``, Edge Config and
integration sources, project creation, the v9 list and other API versions, and every other
endpoint of the API.
"""

from __future__ import annotations

import copy
import json
import time
import uuid
from typing import Any
from urllib.parse import parse_qs

from .http_peer import Peer, segments

TARGETS = ("production", "preview", "development")


def _error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


class VercelServer(Peer):
    def __init__(self, token: str = "vercel-token", team_id: str | None = "team_1",
                 projects: tuple[str, ...] = ("prj_app",)) -> None:
        super().__init__()
        self.token = token
        self.team_id = team_id
        self.projects: dict[str, list[dict[str, Any]]] = {p: [] for p in projects}
        self._rate_limits: list[tuple[int, str | None]] = []  # (seconds to reset, Retry-After)

    # -- what tests read and tamper with -----------------------------------------------------

    def variables(self, project: str = "prj_app") -> list[dict[str, Any]]:
        with self.lock:
            return copy.deepcopy(self.projects[project])

    def value(self, key: str, target: tuple[str, ...] = ("production",), project: str = "prj_app") -> str | None:
        with self.lock:
            found = self._find(project, key, target)
            return None if found is None else str(found["value"])

    def add(self, key: str, value: str, target: tuple[str, ...], project: str = "prj_app") -> None:
        """A variable written behind the client's back (or someone else's)."""
        with self.lock:
            self._create(project, {"key": key, "value": value, "type": "encrypted", "target": list(target)})

    def set_value(self, key: str, value: str, target: tuple[str, ...] = ("production",),
                  project: str = "prj_app") -> None:
        with self.lock:
            found = self._find(project, key, target)
            assert found is not None
            found["value"] = value

    def remove(self, key: str, target: tuple[str, ...] = ("production",), project: str = "prj_app") -> None:
        with self.lock:
            self.projects[project] = [v for v in self.projects[project]
                                      if not (v["key"] == key and set(v["target"]) == set(target))]

    def rate_limit(self, times: int, reset_in: int = 1, retry_after: str | None = None) -> None:
        """Answer the next ``times`` requests 429, the window resetting in ``reset_in`` seconds."""
        with self.lock:
            self._rate_limits.extend([(reset_in, retry_after)] * times)

    # -- the HTTP API --------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: str, headers: Any,
               body: bytes) -> tuple[int, Any] | tuple[int, Any, dict[str, str]]:
        with self.lock:
            limited = self._rate_limits.pop(0) if self._rate_limits else None
        if limited is not None:
            reset_in, retry_after = limited
            answer = {"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "0",
                      "X-RateLimit-Reset": str(int(time.time()) + reset_in)}
            if retry_after is not None:
                answer["Retry-After"] = retry_after
            return 429, _error("rate_limited", "Rate limit exceeded", limit={"remaining": 0}), answer
        if headers.get("Authorization") != f"Bearer {self.token}":
            return 403, _error("forbidden", "Not authorized", invalidToken=True)
        params = {k: v[0] for k, v in parse_qs(query).items()}
        parts = segments(path)
        if len(parts) < 4 or parts[1] != "projects" or parts[3] != "env":
            return 404, _error("not_found", "The requested path was not found")
        version, project, rest = parts[0], parts[2], parts[4:]
        if project not in self.projects or params.get("teamId") != self.team_id:
            return 404, _error("not_found", "Project not found")
        try:
            payload = json.loads(body) if body else {}
        except ValueError:
            return 400, _error("bad_request", "Invalid JSON")
        with self.lock:
            if not rest and method == "GET" and version == "v10":
                envs = [{k: v for k, v in e.items() if k != "value"} | {"value": ""} for e in self.projects[project]]
                return 200, {"envs": envs, "pagination": {"count": len(envs), "next": None, "prev": None}}
            if not rest and method == "POST" and version == "v10":
                return self._post(project, payload, params.get("upsert") == "true")
            if len(rest) == 1:
                found = next((e for e in self.projects[project] if e["id"] == rest[0]), None)
                if found is None:
                    return 404, _error("not_found", "Environment Variable not found")
                if method == "GET" and version == "v1":
                    return 200, dict(found, decrypted=True)
                if method == "PATCH" and version == "v9":
                    return self._patch(project, found, payload)
                if method == "DELETE" and version == "v9":
                    self.projects[project].remove(found)
                    return 200, dict(found)
        return 404, _error("not_found", "The requested path was not found")

    def _post(self, project: str, payload: Any, upsert: bool) -> tuple[int, Any]:
        problem = self._invalid(payload, create=True)
        if problem:
            return 400, _error("bad_request", problem)
        clashing = [e for e in self.projects[project] if e["key"] == payload["key"]
                    and e.get("gitBranch") == payload.get("gitBranch") and set(e["target"]) & set(payload["target"])]
        if clashing and not upsert:
            return 400, _error("ENV_CONFLICT", f"A variable with the name `{payload['key']}` already exists for "
                                               f"the target {clashing[0]['target'][0]}", key=payload["key"])
        for old in clashing:
            self.projects[project].remove(old)
        created = self._create(project, payload)
        return 201, {"created": created, "failed": []}

    def _patch(self, project: str, found: dict[str, Any], payload: Any) -> tuple[int, Any]:
        problem = self._invalid(payload, create=False)
        if problem:
            return 400, _error("bad_request", problem)
        for field in ("key", "value", "type", "target"):
            if field in payload:
                found[field] = payload[field]
        found["updatedAt"] = int(time.time() * 1000)
        return 200, dict(found)

    @staticmethod
    def _invalid(payload: Any, *, create: bool) -> str | None:
        if not isinstance(payload, dict):
            return "Invalid request body"
        for field in ("key", "value"):
            if (create or field in payload) and not isinstance(payload.get(field), str):
                return f"`{field}` should be string"
        target = payload.get("target")
        if (create or target is not None) and (not isinstance(target, list) or not target
                                               or not all(t in TARGETS for t in target)):
            return "`target` should be an array of production, preview or development"
        if payload.get("type", "encrypted") not in ("system", "secret", "encrypted", "plain", "sensitive"):
            return "`type` is invalid"
        return None

    def _create(self, project: str, payload: dict[str, Any]) -> dict[str, Any]:
        now = int(time.time() * 1000)
        created = {"id": uuid.uuid4().hex[:16], "key": payload["key"], "value": payload["value"],
                   "type": payload.get("type", "encrypted"), "target": list(payload["target"]),
                   "gitBranch": payload.get("gitBranch"), "createdAt": now, "updatedAt": now,
                   "configurationId": None}
        self.projects[project].append(created)
        return dict(created)

    def _find(self, project: str, key: str, target: tuple[str, ...]) -> dict[str, Any] | None:
        return next((e for e in self.projects[project] if e["key"] == key and set(e["target"]) == set(target)), None)
