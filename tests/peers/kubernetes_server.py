"""A Kubernetes API test server: the core/v1 Secrets calls of the kubernetes client, on loopback.

Covered: bearer token check (missing or wrong: 401 Status); ``GET/POST
/api/v1/namespaces/<ns>/secrets`` and ``GET/PUT/PATCH/DELETE
/api/v1/namespaces/<ns>/secrets/<name>``; base64 ``data`` (rejected when not base64) and
``stringData`` folded into ``data`` as the API server does; merge and strategic-merge patches
(the same for a Secret's maps: keys merge, null deletes); ``resourceVersion`` bumped on every
change and checked on PUT (409 Conflict); 404 NotFound and 409 AlreadyExists with a Status body.

Throttling as the API server answers it (``throttle``): a 429 ``TooManyRequests`` or 503
``ServiceUnavailable`` Status, with a Retry-After header when the test names one.

Not covered: JSON patch and server-side apply (415), ``generateName``, dry-run, field
managers, watches, label and field selectors, other resources and API groups, namespace
existence (every namespace exists), immutable Secrets, type-specific validation of Secret
types, RBAC (one token can do everything), discovery (``/api``, ``/version``), TLS.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from .http_peer import Peer

_ROUTE = re.compile(r"^/api/v1/namespaces/(?P<ns>[^/]+)/secrets(?:/(?P<name>[^/]+))?/?$")
_MERGE_TYPES = ("application/merge-patch+json", "application/strategic-merge-patch+json")


def _status(code: int, reason: str, message: str, name: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": message, "reason": reason, "code": code}
    if name is not None:
        status["details"] = {"name": name, "kind": "secrets"}
    return status


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge(result.get(key), value)
    return result


class KubernetesServer(Peer):
    def __init__(self, token: str = "k8s-token") -> None:
        super().__init__()
        self.token = token
        self.secrets: dict[tuple[str, str], dict[str, Any]] = {}
        self._version = 100

    # -- what tests read and tamper with -----------------------------------------------------

    def data(self, namespace: str, name: str) -> dict[str, str] | None:
        """The Secret's data, decoded (None when the Secret does not exist)."""
        with self.lock:
            secret = self.secrets.get((namespace, name))
            if secret is None:
                return None
            return {k: base64.b64decode(v).decode("utf-8") for k, v in (secret.get("data") or {}).items()}

    def secret(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            found = self.secrets.get((namespace, name))
            return copy.deepcopy(found) if found is not None else None

    def put_key(self, namespace: str, name: str, key: str, value: str) -> None:
        with self.lock:
            secret = self.secrets[(namespace, name)]
            secret.setdefault("data", {})[key] = base64.b64encode(value.encode()).decode()
            self._bump(secret)

    def delete_key(self, namespace: str, name: str, key: str) -> None:
        with self.lock:
            secret = self.secrets[(namespace, name)]
            secret.get("data", {}).pop(key, None)
            self._bump(secret)

    def delete(self, namespace: str, name: str) -> None:
        with self.lock:
            self.secrets.pop((namespace, name), None)

    def throttled(self, status: int) -> Any:
        """The API server's Status for 429 (API priority and fairness) and 503."""
        if status == 429:
            return _status(429, "TooManyRequests", "Too many requests, please try again later.")
        return _status(503, "ServiceUnavailable", "the server is currently unable to handle the request")

    # -- the HTTP API --------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if headers.get("Authorization") != f"Bearer {self.token}":
            return 401, _status(401, "Unauthorized", "Unauthorized")
        match = _ROUTE.match(path)
        if not match:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        namespace, name = unquote(match["ns"]), match["name"] and unquote(match["name"])
        content_type = (headers.get("Content-Type") or "").split(";")[0].strip()
        try:
            payload = json.loads(body) if body else None
        except ValueError:
            return 400, _status(400, "BadRequest", "the request body is not JSON")
        with self.lock:
            if name is None:
                if method == "GET":
                    items = [copy.deepcopy(s) for (ns, _), s in sorted(self.secrets.items()) if ns == namespace]
                    return 200, {"kind": "SecretList", "apiVersion": "v1",
                                 "metadata": {"resourceVersion": str(self._version)}, "items": items}
                if method == "POST":
                    return self._create(namespace, payload)
                return 405, _status(405, "MethodNotAllowed", "method not allowed")
            return self._item(method, namespace, name, payload, content_type)

    def _item(self, method: str, namespace: str, name: str, payload: Any, content_type: str) -> tuple[int, Any]:
        key = (namespace, name)
        current = self.secrets.get(key)
        if current is None and method in ("GET", "PUT", "PATCH", "DELETE"):
            return 404, _status(404, "NotFound", f'secrets "{name}" not found', name)
        assert current is not None
        if method == "GET":
            return 200, copy.deepcopy(current)
        if method == "DELETE":
            del self.secrets[key]
            return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                         "details": {"name": name, "kind": "secrets"}}
        if method == "PUT":
            if not isinstance(payload, dict):
                return 400, _status(400, "BadRequest", "body must be a Secret")
            wanted = (payload.get("metadata") or {}).get("resourceVersion")
            if wanted and wanted != current["metadata"]["resourceVersion"]:
                return 409, _status(409, "Conflict", f'Operation cannot be fulfilled on secrets "{name}": '
                                    "the object has been modified", name)
            replaced = self._normalized(payload, namespace, name, keep=current["metadata"])
            if isinstance(replaced, tuple):
                return replaced
            self.secrets[key] = replaced
            return 200, copy.deepcopy(replaced)
        if method == "PATCH":
            if content_type not in _MERGE_TYPES:
                return 415, _status(415, "UnsupportedMediaType", f"the body of the request was in an "
                                    f"unsupported format: {content_type}")
            if not isinstance(payload, dict):
                return 400, _status(400, "BadRequest", "a merge patch must be an object")
            merged = _merge(current, payload)
            patched = self._normalized(merged, namespace, name, keep=current["metadata"])
            if isinstance(patched, tuple):
                return patched
            self.secrets[key] = patched
            return 200, copy.deepcopy(patched)
        return 405, _status(405, "MethodNotAllowed", "method not allowed")

    def _create(self, namespace: str, payload: Any) -> tuple[int, Any]:
        if not isinstance(payload, dict):
            return 400, _status(400, "BadRequest", "body must be a Secret")
        name = (payload.get("metadata") or {}).get("name")
        if not name:
            return 422, _status(422, "Invalid", "metadata.name: Required value")
        if (namespace, name) in self.secrets:
            return 409, _status(409, "AlreadyExists", f'secrets "{name}" already exists', name)
        created = self._normalized(payload, namespace, name, keep=None)
        if isinstance(created, tuple):
            return created
        self.secrets[(namespace, name)] = created
        return 201, copy.deepcopy(created)

    def _normalized(self, obj: dict[str, Any], namespace: str, name: str,
                    keep: dict[str, Any] | None) -> dict[str, Any] | tuple[int, Any]:
        data = dict(obj.get("data") or {})
        for key, value in data.items():
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, TypeError, ValueError):
                return 400, _status(400, "BadRequest", f"data[{key}]: illegal base64 data")
        for key, value in (obj.get("stringData") or {}).items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        metadata = dict(obj.get("metadata") or {})
        metadata.update(name=name, namespace=namespace)
        if keep is not None:
            metadata["uid"] = keep["uid"]
            metadata["creationTimestamp"] = keep["creationTimestamp"]
        else:
            metadata["uid"] = str(uuid.uuid4())
            metadata["creationTimestamp"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        secret = {"apiVersion": "v1", "kind": "Secret", "metadata": metadata,
                  "type": obj.get("type") or "Opaque", "data": data}
        self._bump(secret)
        return secret

    def _bump(self, secret: dict[str, Any]) -> None:
        self._version += 1
        secret["metadata"]["resourceVersion"] = str(self._version)
