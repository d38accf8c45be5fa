"""The GitHub test server with GitHub Apps' installation tokens, written from GitHub's REST
reference ("Create an installation access token for an app") and "Authenticating as a GitHub App".

Covered, beside the Actions secrets of ``GitHubServer`` (its own bearer token check for those):
``POST /app/installations/{installation_id}/access_tokens`` (also under ``/api/v3``) authenticated
by the App's JWT (``Authorization: Bearer``): RS256, signed by the App's private key (the server
holds the public key), ``iss`` the App id, ``exp`` in the future and at most ten minutes after
``iat`` (else 401 ``A JSON web token could not be decoded`` / ``'Expiration time' claim ('exp') is
too far in the future``); an unknown installation, or one of another App: 404; the JSON body's
``permissions`` (names from GitHub's list, levels read/write/admin) and ``repositories`` (names
of the installation's repositories; another: 422); 201 with ``token``, ``expires_at`` (one hour),
``permissions``, ``repository_selection``. ``DELETE /installation/token`` with the token itself: 204.

Tests read whether a token works (``active``) and what it may do (``issued``).

Not covered: ``repository_ids``, the installation's own permission ceiling (every permission
asked is granted), suspended installations, JWT clock-skew tolerance beyond GitHub's documented
60 seconds, and the other App endpoints (listing installations, the App itself).
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from .github_server import GitHubServer
from .http_peer import segments

LEVELS = ("read", "write", "admin")


class GitHubAppServer(GitHubServer):
    def __init__(self, app_id: str = "123456", installation_id: str = "7890") -> None:
        super().__init__()
        self.app_id = app_id
        self.installation_id = installation_id
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.private_key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                 serialization.NoEncryption()).decode()
        self._public = key.public_key()
        self.installation_repos = {"my-service", "other-service"}
        self.issued: list[dict[str, Any]] = []  # every token created: token, expires_at, permissions, repositories

    def active(self, text: str) -> bool:
        now = datetime.now(UTC)
        with self.lock:
            return any(t["token"] == text and not t["revoked"] and t["expires"] > now for t in self.issued)

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        parts = segments(path)
        if parts[:2] == ["api", "v3"]:
            parts = parts[2:]
        if parts == ["installation", "token"] and method == "DELETE":
            return self._revoke(headers)
        if len(parts) != 4 or parts[:2] != ["app", "installations"] or parts[3] != "access_tokens":
            return super().handle(method, path, query, headers, body)
        if method != "POST":
            return 404, {"message": "Not Found"}
        problem = self._app_jwt(headers.get("Authorization", ""))
        if problem is not None:
            return 401, {"message": problem}
        if parts[2] != self.installation_id:
            return 404, {"message": "Not Found"}
        return self._create(json.loads(body or b"{}"))

    def _app_jwt(self, header: str) -> str | None:
        if not header.startswith("Bearer "):
            return "A JSON web token could not be decoded"
        try:
            claims = jwt.decode(header[7:], self._public, algorithms=["RS256"],
                                options={"require": ["iat", "exp", "iss"]})
        except jwt.ExpiredSignatureError:
            return ("'Expiration time' claim ('exp') must be a numeric value representing the future time at which "
                    "the assertion expires")
        except jwt.PyJWTError:
            return "A JSON web token could not be decoded"
        if str(claims["iss"]) != self.app_id:
            return "A JSON web token could not be decoded"
        if int(claims["exp"]) - int(claims["iat"]) > 660:  # ten minutes, with the 60 s GitHub allows for skew
            return "'Expiration time' claim ('exp') is too far in the future"
        return None

    def _create(self, payload: dict[str, Any]) -> tuple[int, Any]:
        permissions = payload.get("permissions") or {"contents": "read", "metadata": "read"}
        if not isinstance(permissions, dict) or any(level not in LEVELS for level in permissions.values()):
            return 422, {"message": "Invalid request.", "documentation_url": "https://docs.github.com/rest"}
        repositories = payload.get("repositories")
        if repositories is not None and (not isinstance(repositories, list)
                                         or any(r not in self.installation_repos for r in repositories)):
            return 422, {"message": "There is at least one repository that does not exist or is not accessible "
                                    "to the parent installation."}
        expires = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
        made = {"token": "ghs_" + secrets.token_urlsafe(27), "expires": expires, "revoked": False,
                "permissions": permissions, "repositories": repositories}
        with self.lock:
            self.issued.append(made)
        return 201, {"token": made["token"], "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
                     "permissions": permissions, "repository_selection": "selected" if repositories else "all"}

    def _revoke(self, headers: Any) -> tuple[int, Any]:
        text = headers.get("Authorization", "").removeprefix("Bearer ").removeprefix("token ")
        with self.lock:
            for made in self.issued:
                if made["token"] == text and not made["revoked"]:
                    made["revoked"] = True
                    return 204, None
        return 401, {"message": "Bad credentials"}
