"""A GitHub REST API test server for Actions secrets, on loopback, written from GitHub's REST
reference ("Actions secrets", "Repositories").

Covered: the API at the root (github.com) or under ``/api/v3`` (GitHub Enterprise Server);
bearer token check (``Authorization: Bearer``; missing or wrong: 401 ``Bad credentials``);
``GET /repos/{owner}/{repo}``; for repository, environment and organisation scopes
(``/repos/{o}/{r}/actions/secrets``, ``/repos/{o}/{r}/environments/{env}/secrets``,
``/orgs/{org}/actions/secrets``): ``GET .../public-key`` (a real Curve25519 key pair: tests
decrypt what they received with ``value``), ``GET``/``PUT``/``DELETE .../{secret_name}``; a PUT
needs ``encrypted_value`` and the current ``key_id`` (else 422), names are upper-cased and must
match GitHub's rules (else 422), answers 201 when created and 204 when updated, and stamps
``created_at``/``updated_at``; organisation secrets keep ``visibility`` and
``selected_repository_ids``. Unknown repositories, environments and organisations: 404.

Throttling as GitHub answers a secondary rate limit (``throttle``): 403 or 429 with a
``Retry-After`` header when the test names one.

Not covered: listing secrets, the selected-repositories sub-endpoints, Dependabot and Codespaces
secrets, variables, pagination, primary rate-limit headers on every answer, conditional requests
(ETag), GitHub Apps and fine-grained token permissions (one token can do everything), and the
API version header (accepted, never checked).
"""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime
from typing import Any

from nacl.public import PrivateKey, SealedBox

from .http_peer import Peer, segments

_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


def _stamp(moment: datetime | None = None) -> str:
    return (moment or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


class GitHubServer(Peer):
    def __init__(self, token: str = "ghp-test-token") -> None:
        super().__init__()
        self.token = token
        self._private = PrivateKey.generate()
        self.key_id = "3380204578043523366"
        self.repos: dict[tuple[str, str], int] = {}  # (owner, repo) -> id
        self.environments: set[tuple[str, str, str]] = set()
        self.orgs: set[str] = set()
        # scope ("repos/o/r", "repos/o/r/environments/e", "orgs/o") -> NAME -> record
        self.secrets: dict[str, dict[str, dict[str, Any]]] = {}

    # -- what tests set up, read and tamper with --------------------------------------------

    def add_repo(self, owner: str, repo: str, *environments: str) -> None:
        with self.lock:
            self.repos[(owner, repo)] = 1000 + len(self.repos)
            self.environments.update((owner, repo, env) for env in environments)

    def value(self, scope: str, name: str) -> str | None:
        """The plaintext of a stored secret, opened with the private key (None when absent)."""
        with self.lock:
            record = self.secrets.get(scope, {}).get(name.upper())
        if record is None:
            return None
        return SealedBox(self._private).decrypt(base64.b64decode(record["encrypted_value"])).decode("utf-8")

    def record(self, scope: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            record = self.secrets.get(scope, {}).get(name.upper())
            return None if record is None else dict(record)

    def overwrite(self, scope: str, name: str, value: str, at: datetime) -> None:
        """Someone else writes the secret (as the UI would), at ``at`` on the store's clock."""
        sealed = base64.b64encode(SealedBox(self._private.public_key).encrypt(value.encode())).decode()
        with self.lock:
            record = self.secrets[scope][name.upper()]
            record.update(encrypted_value=sealed, updated_at=_stamp(at))

    def delete(self, scope: str, name: str) -> None:
        with self.lock:
            self.secrets.get(scope, {}).pop(name.upper(), None)

    # -- the API ---------------------------------------------------------------------------

    def throttled(self, status: int) -> Any:
        return {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
                           "again.", "documentation_url": "https://docs.github.com/rest"}

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if headers.get("Authorization") != f"Bearer {self.token}":
            return 401, {"message": "Bad credentials"}
        parts = segments(path)
        if parts[:2] == ["api", "v3"]:  # GitHub Enterprise Server's API root
            parts = parts[2:]
        with self.lock:
            if len(parts) == 3 and parts[0] == "repos" and method == "GET":
                repo_id = self.repos.get((parts[1], parts[2]))
                if repo_id is None:
                    return 404, {"message": "Not Found"}
                return 200, {"id": repo_id, "name": parts[2], "full_name": f"{parts[1]}/{parts[2]}"}
            found = self._scope(parts)
            if found is None:
                return 404, {"message": "Not Found"}
            scope, rest = found
            if rest == ["public-key"] and method == "GET":
                key = base64.b64encode(bytes(self._private.public_key)).decode()
                return 200, {"key_id": self.key_id, "key": key}
            if len(rest) != 1:
                return 404, {"message": "Not Found"}
            name = rest[0].upper()
            if method == "GET":
                record = self.secrets.get(scope, {}).get(name)
                if record is None:
                    return 404, {"message": "Not Found"}
                shown = {"name": name, "created_at": record["created_at"], "updated_at": record["updated_at"]}
                if scope.startswith("orgs/"):
                    shown["visibility"] = record["visibility"]
                return 200, shown
            if method == "DELETE":
                return (204, None) if self.secrets.get(scope, {}).pop(name, None) else (404, {"message": "Not Found"})
            if method == "PUT":
                return self._put(scope, name, body)
        return 404, {"message": "Not Found"}

    def _scope(self, parts: list[str]) -> tuple[str, list[str]] | None:
        """The scope a path addresses and the path after its ``secrets`` segment."""
        if parts[:1] == ["orgs"] and len(parts) >= 4 and parts[2:4] == ["actions", "secrets"]:
            return (f"orgs/{parts[1]}", parts[4:]) if parts[1] in self.orgs else None
        if parts[:1] != ["repos"] or len(parts) < 5 or (parts[1], parts[2]) not in self.repos:
            return None
        if parts[3:5] == ["actions", "secrets"]:
            return f"repos/{parts[1]}/{parts[2]}", parts[5:]
        if parts[3] == "environments" and len(parts) >= 6 and parts[5] == "secrets":
            if (parts[1], parts[2], parts[4]) not in self.environments:
                return None
            return f"repos/{parts[1]}/{parts[2]}/environments/{parts[4]}", parts[6:]
        return None

    def _put(self, scope: str, name: str, raw: bytes) -> tuple[int, Any]:
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, {"message": "Problems parsing JSON"}
        if not _NAME.match(name) or name.startswith("GITHUB_"):
            return 422, {"message": "Invalid request.\n\nSecret names can only contain alphanumeric characters "
                                    "([a-z], [A-Z], [0-9]) or underscores (_)."}
        if not isinstance(body.get("encrypted_value"), str) or body.get("key_id") != self.key_id:
            return 422, {"message": "Invalid request.\n\nBad key_id or encrypted_value."}
        try:
            SealedBox(self._private).decrypt(base64.b64decode(body["encrypted_value"]))
        except Exception:
            return 422, {"message": "Invalid request.\n\nencrypted_value cannot be decrypted."}
        stored = self.secrets.setdefault(scope, {})
        created = name not in stored
        now = _stamp()
        record = {"encrypted_value": body["encrypted_value"], "key_id": body["key_id"], "updated_at": now,
                  "created_at": now if created else stored[name]["created_at"]}
        if scope.startswith("orgs/"):
            visibility = body.get("visibility")
            if visibility not in ("all", "private", "selected"):
                return 422, {"message": "Invalid request.\n\nvisibility is not included in the list."}
            record.update(visibility=visibility,
                          selected_repository_ids=list(body.get("selected_repository_ids") or []))
        stored[name] = record
        return (201, {}) if created else (204, None)
