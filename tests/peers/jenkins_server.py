"""A Jenkins test server for the Credentials plugin's REST API, on loopback, written from the
plugin's "REST API" user documentation and Jenkins' "Remote access API" and CSRF protection pages.

Covered: HTTP basic authentication with a user's API token (missing or wrong: 401); the crumb
issuer (``GET /crumbIssuer/api/json``: ``{crumb, crumbRequestField}``; a POST without the crumb:
403 ``No valid crumb was included in the request``), or none (``csrf=False``: 404); the root
store (``/credentials/store/system/domain/<domain>/``) and folder stores
(``/job/<a>/job/<b>/credentials/store/folder/domain/<domain>/``; unknown folders and domains:
404); ``POST .../createCredentials`` with a credential's XML (secret text or username with
password; an existing id: 409), ``GET .../credential/<id>/api/json`` (metadata, never the
secret; unknown: 404), ``POST .../credential/<id>/config.xml`` (replaces it).

Throttling as a proxy in front of Jenkins answers (``throttle``): 429 or 503 with a
``Retry-After`` header when the test names one.

Not covered: crumbs bound to a web session (any issued crumb is accepted), ``DELETE`` and
``GET config.xml``, credential types other than the two above, domain creation, user-scoped
stores, permissions (one user can do everything), the secret's encryption at rest (the peer
keeps plaintext for tests to read), and Jenkins' HTML error pages (errors answer JSON).
"""

from __future__ import annotations

import secrets
import xml.etree.ElementTree as ET
from base64 import b64encode
from typing import Any

from .http_peer import Peer, segments

_TYPES = {
    "org.jenkinsci.plugins.plaincredentials.impl.StringCredentialsImpl": ("Secret text", "secret"),
    "com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl": ("Username with password",
                                                                               "password"),
}


class JenkinsServer(Peer):
    def __init__(self, user: str = "admin", token: str = "jenkins-api-token", *, csrf: bool = True) -> None:
        super().__init__()
        self.authorization = "Basic " + b64encode(f"{user}:{token}".encode()).decode()
        self.crumb = secrets.token_hex(16) if csrf else None
        self.folders: set[str] = set()  # "a/b"
        self.domains = {"_"}
        # (folder or "", domain, id) -> {"class", "description", "secret", "username"}
        self.credentials: dict[tuple[str, str, str], dict[str, Any]] = {}

    # -- what tests read and tamper with ---------------------------------------------------

    def secret(self, credential_id: str, folder: str = "", domain: str = "_") -> str | None:
        with self.lock:
            found = self.credentials.get((folder, domain, credential_id))
            return None if found is None else str(found["secret"])

    def stored(self, credential_id: str, folder: str = "", domain: str = "_") -> dict[str, Any] | None:
        with self.lock:
            found = self.credentials.get((folder, domain, credential_id))
            return None if found is None else dict(found)

    def delete(self, credential_id: str, folder: str = "", domain: str = "_") -> None:
        with self.lock:
            self.credentials.pop((folder, domain, credential_id), None)

    # -- the API ---------------------------------------------------------------------------

    def throttled(self, status: int) -> Any:
        return {"message": "Too Many Requests" if status == 429 else "Service Unavailable"}

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if headers.get("Authorization") != self.authorization:
            return 401, {"message": "Unauthorized"}
        parts = segments(path)
        if parts == ["crumbIssuer", "api", "json"] and method == "GET":
            if self.crumb is None:
                return 404, {"message": "Not Found"}
            return 200, {"_class": "hudson.security.csrf.DefaultCrumbIssuer", "crumb": self.crumb,
                         "crumbRequestField": "Jenkins-Crumb"}
        if method == "POST" and self.crumb is not None and headers.get("Jenkins-Crumb") != self.crumb:
            return 403, {"message": "No valid crumb was included in the request"}
        folder: list[str] = []
        while parts[:1] == ["job"] and len(parts) >= 2:
            folder.append(parts[1])
            parts = parts[2:]
        where = "/".join(folder)
        store = "folder" if folder else "system"
        if parts[:5] != ["credentials", "store", store, "domain", parts[4] if len(parts) > 4 else ""]:
            return 404, {"message": "Not Found"}
        domain, rest = parts[4], parts[5:]
        with self.lock:
            if (folder and where not in self.folders) or domain not in self.domains:
                return 404, {"message": "Not Found"}
            if rest == ["createCredentials"] and method == "POST":
                return self._create(where, domain, body)
            if len(rest) == 4 and rest[0] == "credential" and rest[2:] == ["api", "json"] and method == "GET":
                found = self.credentials.get((where, domain, rest[1]))
                if found is None:
                    return 404, {"message": "Not Found"}
                return 200, {"_class": found["class"], "id": rest[1], "description": found["description"],
                             "displayName": rest[1], "fullName": f"{store}/_/{rest[1]}",
                             "typeName": _TYPES[found["class"]][0]}
            if len(rest) == 3 and rest[0] == "credential" and rest[2] == "config.xml" and method == "POST":
                if (where, domain, rest[1]) not in self.credentials:
                    return 404, {"message": "Not Found"}
                parsed = self._parse(body)
                if parsed is None or parsed[0] != rest[1]:
                    return 400, {"message": "Bad credential XML"}
                self.credentials[(where, domain, rest[1])] = parsed[1]
                return 200, None
        return 404, {"message": "Not Found"}

    def _create(self, folder: str, domain: str, body: bytes) -> tuple[int, Any]:
        parsed = self._parse(body)
        if parsed is None:
            return 400, {"message": "Bad credential XML"}
        credential_id, credential = parsed
        if (folder, domain, credential_id) in self.credentials:
            return 409, {"message": f"A credential with id {credential_id} already exists"}
        self.credentials[(folder, domain, credential_id)] = credential
        return 200, None

    @staticmethod
    def _parse(body: bytes) -> tuple[str, dict[str, Any]] | None:
        try:
            root = ET.fromstring(body)  # noqa: S314 - the test's own client wrote it
        except ET.ParseError:
            return None
        if root.tag not in _TYPES:
            return None
        field = _TYPES[root.tag][1]
        credential_id, secret = root.findtext("id"), root.findtext(field)
        if not credential_id or secret is None:
            return None
        return credential_id, {"class": root.tag, "description": root.findtext("description") or "",
                               "secret": secret, "username": root.findtext("username")}
