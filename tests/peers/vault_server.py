"""A Vault KV test server: the HTTP API that hvac's KV v1 and v2 clients call, on loopback.

Covered: token check (``X-Vault-Token``; missing or wrong: 403 ``permission denied``);
KV v2 ``GET/POST/PUT/DELETE /v1/<mount>/data/<path>`` (``?version=``, check-and-set through
``options.cas``, soft-deleted and destroyed versions answered as Vault does: 404 with the
version's metadata), ``GET/DELETE /v1/<mount>/metadata/<path>``; KV v1
``GET/POST/PUT/DELETE /v1/<mount>/<path>``; unknown mounts: 404 ``no handler for route``.

AppRole login (``approle``): ``POST /v1/auth/approle/login`` with ``role_id`` and ``secret_id``
answers Vault's ``auth`` block (``client_token``, ``lease_duration``, ``token_policies``...) with
a new token every KV call then accepts; a wrong pair: 400 ``invalid role or secret ID``.

Throttling as Vault answers it (``throttle``): 429 ``rate limit quota exceeded``, 503
``Vault is sealed``, with a Retry-After header when the test names one.

Not covered: LIST, KV v2 PATCH (``kv.v2.patch``), undelete/destroy endpoints, metadata
writes, ``max_versions`` and ``cas_required``, ``sys/*`` (mounts, health, seal status),
auth methods other than a fixed token and AppRole login (no secret-id creation, role reads,
CIDR bounds, token expiry or renewal: issued tokens last as long as the server), token policies
(one token can do everything),
namespaces (the ``X-Vault-Namespace`` header is ignored), response wrapping, leases, TLS,
and mount paths with more than one segment.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, unquote

from .http_peer import Peer


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _response(data: Any) -> dict[str, Any]:
    return {"request_id": str(uuid.uuid4()), "lease_id": "", "renewable": False, "lease_duration": 0,
            "data": data, "wrap_info": None, "warnings": None, "auth": None, "mount_type": "kv"}


def _errors(*messages: str) -> dict[str, Any]:
    return {"errors": list(messages)}


class VaultServer(Peer):
    def __init__(self, token: str = "root-token", mounts: dict[str, int] | None = None,
                 approle: tuple[str, str] | None = None, lease_duration: int = 1200) -> None:
        super().__init__()
        self.token = token
        self.approle = approle  # (role_id, secret_id) the login accepts
        self.lease_duration = lease_duration
        self.issued: list[str] = []  # tokens from AppRole logins, in order
        self.mounts = dict(mounts or {"secret": 2, "kv1": 1})  # mount -> KV version
        self.v1: dict[tuple[str, str], dict[str, Any]] = {}
        # (mount, path) -> {"current": n, "versions": {n: {"data", "created_time", "deletion_time", "destroyed"}}}
        self.v2: dict[tuple[str, str], dict[str, Any]] = {}

    # -- what tests read and tamper with -----------------------------------------------------

    def data(self, mount: str, path: str) -> dict[str, Any] | None:
        """The current data at a path (None when absent or the latest version is deleted)."""
        with self.lock:
            if self.mounts[mount] == 1:
                stored = self.v1.get((mount, path))
                return None if stored is None else dict(stored)
            entry = self.v2.get((mount, path))
            if not entry:
                return None
            version = entry["versions"][entry["current"]]
            return None if version["deletion_time"] or version["destroyed"] else dict(version["data"])

    def version(self, mount: str, path: str) -> int:
        with self.lock:
            entry = self.v2.get((mount, path))
            return entry["current"] if entry else 0

    def put(self, mount: str, path: str, data: dict[str, Any]) -> None:
        """Write behind the client's back (a new version on KV v2)."""
        with self.lock:
            if self.mounts[mount] == 1:
                self.v1[(mount, path)] = dict(data)
            else:
                self._new_version(mount, path, dict(data))

    def delete(self, mount: str, path: str) -> None:
        """Delete behind the client's back: KV v1 removes the path, KV v2 soft-deletes the latest."""
        with self.lock:
            if self.mounts[mount] == 1:
                self.v1.pop((mount, path), None)
            else:
                entry = self.v2[(mount, path)]
                entry["versions"][entry["current"]]["deletion_time"] = _now()

    def throttled(self, status: int) -> Any:
        """Vault's answers when a rate limit quota is exceeded (429) and when sealed (503)."""
        return _errors("rate limit quota exceeded" if status == 429 else "Vault is sealed")

    # -- the HTTP API --------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if path == "/v1/auth/approle/login" and method in ("POST", "PUT"):
            return self._approle_login(body)
        with self.lock:
            known = headers.get("X-Vault-Token") in (self.token, *self.issued)
        if not known:
            return 403, _errors("permission denied")
        if not path.startswith("/v1/"):
            return 404, _errors("unsupported path")
        mount, _, rest = unquote(path[len("/v1/"):]).partition("/")
        if mount not in self.mounts or not rest:
            return 404, _errors(f"no handler for route \"{mount}/{rest}\". route entry not found.")
        try:
            payload = json.loads(body) if body else {}
        except ValueError:
            return 400, _errors("failed to parse JSON input")
        with self.lock:
            if self.mounts[mount] == 1:
                return self._v1(method, mount, rest.strip("/"), payload)
            section, _, secret_path = rest.partition("/")
            params = parse_qs(query)
            if section == "data":
                return self._v2_data(method, mount, secret_path.strip("/"), params, payload)
            if section == "metadata":
                return self._v2_metadata(method, mount, secret_path.strip("/"))
            return 404, _errors("unsupported path")

    def _approle_login(self, body: bytes) -> tuple[int, Any]:
        try:
            payload = json.loads(body) if body else {}
        except ValueError:
            return 400, _errors("failed to parse JSON input")
        pair = (payload.get("role_id"), payload.get("secret_id")) if isinstance(payload, dict) else None
        if self.approle is None or pair != self.approle:
            return 400, _errors("invalid role or secret ID")
        token = f"hvs.{uuid.uuid4().hex}"
        with self.lock:
            self.issued.append(token)
        out = _response(None)
        out["mount_type"] = ""
        out["auth"] = {"client_token": token, "accessor": str(uuid.uuid4()), "policies": ["default"],
                       "token_policies": ["default"], "metadata": {"role_name": "app"},
                       "lease_duration": self.lease_duration, "renewable": True,
                       "entity_id": str(uuid.uuid4()), "token_type": "service", "orphan": True}
        return 200, out

    def _v1(self, method: str, mount: str, path: str, payload: Any) -> tuple[int, Any]:
        key = (mount, path)
        if method == "GET":
            if key not in self.v1:
                return 404, _errors()
            out = _response(dict(self.v1[key]))
            out["lease_duration"] = 2764800
            return 200, out
        if method in ("POST", "PUT"):
            if not isinstance(payload, dict):
                return 400, _errors("data must be an object")
            self.v1[key] = dict(payload)
            return 204, None
        if method == "DELETE":
            self.v1.pop(key, None)
            return 204, None
        return 405, _errors("unsupported operation")

    def _v2_data(self, method: str, mount: str, path: str, params: dict[str, list[str]],
                 payload: Any) -> tuple[int, Any]:
        entry = self.v2.get((mount, path))
        if method == "GET":
            if not entry:
                return 404, _errors()
            number = int(params.get("version", ["0"])[0]) or entry["current"]
            if number not in entry["versions"]:
                return 404, _errors()
            version = entry["versions"][number]
            metadata = self._metadata(version, number)
            if version["deletion_time"] or version["destroyed"]:
                return 404, _response({"data": None, "metadata": metadata})
            return 200, _response({"data": dict(version["data"]), "metadata": metadata})
        if method in ("POST", "PUT"):
            if not isinstance(payload, dict) or not isinstance(payload.get("data"), dict):
                return 400, _errors("no data provided")
            cas = (payload.get("options") or {}).get("cas")
            current = entry["current"] if entry else 0
            if cas is not None and cas != current:
                return 400, _errors("check-and-set parameter did not match the current version")
            number = self._new_version(mount, path, dict(payload["data"]))
            return 200, _response(self._metadata(self.v2[(mount, path)]["versions"][number], number))
        if method == "DELETE":
            if entry:
                entry["versions"][entry["current"]]["deletion_time"] = _now()
            return 204, None
        return 405, _errors("unsupported operation")

    def _v2_metadata(self, method: str, mount: str, path: str) -> tuple[int, Any]:
        entry = self.v2.get((mount, path))
        if method == "GET":
            if not entry:
                return 404, _errors()
            versions = {str(n): {k: v for k, v in self._metadata(version, n).items() if k != "version"}
                        for n, version in entry["versions"].items()}
            first = entry["versions"][min(entry["versions"])]
            return 200, _response({
                "cas_required": False, "created_time": first["created_time"],
                "current_version": entry["current"], "custom_metadata": None,
                "delete_version_after": "0s", "max_versions": 0, "oldest_version": 0,
                "updated_time": entry["versions"][entry["current"]]["created_time"], "versions": versions,
            })
        if method == "DELETE":
            self.v2.pop((mount, path), None)
            return 204, None
        return 405, _errors("unsupported operation")

    def _new_version(self, mount: str, path: str, data: dict[str, Any]) -> int:
        entry = self.v2.setdefault((mount, path), {"current": 0, "versions": {}})
        entry["current"] += 1
        entry["versions"][entry["current"]] = {
            "data": data, "created_time": _now(), "deletion_time": "", "destroyed": False,
        }
        return int(entry["current"])

    @staticmethod
    def _metadata(version: dict[str, Any], number: int) -> dict[str, Any]:
        return {"created_time": version["created_time"], "custom_metadata": None,
                "deletion_time": version["deletion_time"], "destroyed": version["destroyed"],
                "version": number}
