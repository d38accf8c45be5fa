"""An Azure Key Vault test server, with the Microsoft Entra token endpoint it trusts, over HTTPS on loopback.

Written from Microsoft's public REST references: Key Vault's secrets API (``Set Secret``, ``Get
Secret``, api-version 7.x), its authentication challenge, and the OAuth 2.0 client-credentials
flow of the Microsoft identity platform (v2.0 endpoints).

Covered:
- ``GET /<tenant>/v2.0/.well-known/openid-configuration`` (OpenID Connect discovery: the token
  endpoint) and ``POST /<tenant>/oauth2/v2.0/token`` with ``grant_type=client_credentials``,
  ``client_id``, ``client_secret`` and ``scope``: a bearer access token for that scope; a wrong
  client or secret is 401 ``invalid_client`` (AADSTS7000215), an unknown tenant 400
  ``invalid_request`` (AADSTS90002), another grant type 400 ``unsupported_grant_type``.
- The vault's challenge: a request without a valid bearer token for the vault's resource is 401
  ``Unauthorized`` with ``WWW-Authenticate: Bearer authorization="<authority>/<tenant>",
  resource="<resource>"``, and its body is not processed. As Key Vault names
  ``https://vault.azure.net`` for ``myvault.vault.azure.net``, the resource is the vault's authority
  without its first label (``https://0.0.1:<port>`` for ``127.0.0.1:<port>``).
- ``PUT /secrets/<name>?api-version=7.x`` (``value`` required, ``contentType``, ``tags``,
  ``attributes.enabled``): a new version, answered with its SecretBundle; ``GET
  /secrets/<name>[/<version>]?api-version=7.x``: the latest (or named) version; a missing secret
  is 404 ``SecretNotFound``, a disabled one 403 ``Forbidden``, a name outside ``[0-9a-zA-Z-]{1,127}``
  400 ``BadParameter``, a missing api-version 400 ``MissingApiVersionParameter``.
- Throttling as Key Vault answers it (``throttle``): 429 ``Throttled``, with Retry-After when the
  test names one.
- Soft delete (``delete``, behind the client's back): a deleted secret reads 404 ``SecretNotFound``,
  its name cannot be set (409 ``Conflict``, inner error ``ObjectIsDeletedButRecoverable``) until
  ``POST /deletedsecrets/<name>/recover?api-version=7.x`` brings it back with its versions (404
  ``DeletedSecretNotFound`` when it is not deleted); ``purge`` forgets it.

Not covered: ``GET /deletedsecrets`` (listing or reading deleted secrets), recovery taking time
(it completes at once), listing secrets or versions, ``PATCH`` of attributes, backup and restore,
``nbf``/``exp`` enforcement, keys and certificates, RBAC and access policies (one client can do
everything), CAE claims challenges, token expiry (tokens last the test), certificate and
federated client credentials, managed identity endpoints, instance discovery (clients must
disable it) and v1.0 endpoints.
"""

from __future__ import annotations

import copy
import datetime
import ipaddress
import json
import re
import secrets
import ssl
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote

from .http_peer import Peer

_NAME = re.compile(r"^[0-9a-zA-Z-]{1,127}$")
_SECRET = re.compile(r"^/secrets/(?P<name>[^/]+)(?:/(?P<version>[^/]*))?/?$")
_RECOVER = re.compile(r"^/deletedsecrets/(?P<name>[^/]+)/recover/?$")


def self_signed_tls(folder: Path) -> tuple[ssl.SSLContext, Path]:
    """A throwaway certificate for 127.0.0.1: the server's TLS context and the CA bundle clients trust."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                       critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "peer-cert.pem", folder / "peer-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context, cert_path


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def _aad_error(error: str, code: int, description: str) -> dict[str, Any]:
    return {"error": error, "error_description": f"AADSTS{code}: {description}", "error_codes": [code],
            "timestamp": time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime()),
            "trace_id": str(uuid.uuid4()), "correlation_id": str(uuid.uuid4())}


class AzureKeyVaultServer(Peer):
    """One vault and its tenant's token endpoint on one HTTPS address."""

    def __init__(self, folder: Path, tenant_id: str = "tenant-1", client_id: str = "client-1",
                 client_secret: str = "client-secret-1") -> None:
        tls, self.ca = self_signed_tls(folder)  # ``ca``: the bundle clients must trust
        super().__init__(tls)
        self.tenant_id = tenant_id
        self.client_id = client_id
        self.client_secret = client_secret
        self.tokens: dict[str, str] = {}  # access token -> scope it was issued for
        # name -> its versions' SecretBundles, oldest first; the last is the current one
        self.secrets: dict[str, list[dict[str, Any]]] = {}
        self.deleted: dict[str, list[dict[str, Any]]] = {}  # soft-deleted, recoverable
        self.challenges = 0  # 401 challenges answered

    @property
    def resource(self) -> str:
        """The vault's resource: its authority without the first label, as Key Vault names it."""
        host, _, port = self.url.removeprefix("https://").partition(":")
        return f"https://{host.partition('.')[2]}:{port}"

    # -- what tests read and tamper with -----------------------------------------------------

    def value(self, name: str) -> str | None:
        with self.lock:
            versions = self.secrets.get(name)
            return versions[-1]["value"] if versions else None

    def bundle(self, name: str) -> dict[str, Any] | None:
        with self.lock:
            versions = self.secrets.get(name)
            return copy.deepcopy(versions[-1]) if versions else None

    def versions(self, name: str) -> int:
        with self.lock:
            return len(self.secrets.get(name, []))

    def put(self, name: str, value: str) -> None:
        """A new version written behind the client's back."""
        with self.lock:
            self._new_version(name, {"value": value})

    def delete(self, name: str) -> None:
        """Soft-delete behind the client's back, as every vault does now (recoverable for 90 days)."""
        with self.lock:
            self.deleted[name] = self.secrets.pop(name)

    def purge(self, name: str) -> None:
        with self.lock:
            self.secrets.pop(name, None)
            self.deleted.pop(name, None)

    def disable(self, name: str) -> None:
        with self.lock:
            self.secrets[name][-1]["attributes"]["enabled"] = False

    def throttled(self, status: int) -> Any:
        return _error("Throttled", "Request was not processed because too many requests were received. "
                                   "Reason: VaultRequestTypeLimitReached")

    # -- the HTTP API --------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: str, headers: Any,
               body: bytes) -> tuple[int, Any] | tuple[int, Any, dict[str, str]]:
        if path.startswith(f"/{self.tenant_id}/") or path.endswith(("/token", "/openid-configuration")):
            return self._identity(method, path, body)
        scope = self.tokens.get((headers.get("Authorization") or "").removeprefix("Bearer "))
        if scope != f"{self.resource}/.default":
            with self.lock:
                self.challenges += 1
            challenge = f'Bearer authorization="{self.url}/{self.tenant_id}", resource="{self.resource}"'
            return 401, _error("Unauthorized", "AKV10000: Request is missing a Bearer or PoP token."), {
                "WWW-Authenticate": challenge}
        if not parse_qs(query).get("api-version", [""])[0].startswith("7."):
            return 400, _error("MissingApiVersionParameter", "The api-version query parameter (?api-version=) "
                                                             "is required for all requests.")
        recover = _RECOVER.match(unquote(path))
        if recover is not None and method == "POST":
            return self._recover(recover["name"])
        match = _SECRET.match(unquote(path))
        if match is None:
            return 404, _error("NotFound", "The requested resource was not found.")
        name = match["name"]
        if not _NAME.match(name):
            return 400, _error("BadParameter", "The request URI contains an invalid name: " + name)
        with self.lock:
            if method == "PUT" and not match["version"]:
                return self._set(name, body)
            if method == "GET":
                return self._get(name, match["version"] or "")
        return 405, _error("MethodNotAllowed", f"{method} is not allowed here.")

    def _identity(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        tenant, _, rest = path.strip("/").partition("/")
        if tenant != self.tenant_id:
            return 400, _aad_error("invalid_request", 90002, f"Tenant '{tenant}' not found.")
        if method == "GET" and rest == "v2.0/.well-known/openid-configuration":
            base = f"{self.url}/{tenant}"
            return 200, {"token_endpoint": f"{base}/oauth2/v2.0/token",
                         "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                         "issuer": f"{base}/v2.0", "token_endpoint_auth_methods_supported": [
                             "client_secret_post", "private_key_jwt", "client_secret_basic"],
                         "response_types_supported": ["code", "id_token", "code id_token", "id_token token"]}
        if method == "POST" and rest == "oauth2/v2.0/token":
            form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
            if form.get("grant_type") != "client_credentials":
                return 400, _aad_error("unsupported_grant_type", 70003, "The app requested an unsupported grant type.")
            if form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret:
                return 401, _aad_error("invalid_client", 7000215, "Invalid client secret provided.")
            token = secrets.token_urlsafe(24)
            with self.lock:
                self.tokens[token] = form.get("scope", "")
            return 200, {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": token}
        return 404, _aad_error("invalid_request", 900561, "The endpoint only accepts POST requests.")

    def _recover(self, name: str) -> tuple[int, Any]:
        with self.lock:
            versions = self.deleted.pop(name, None)
            if versions is None:
                return 404, _error("DeletedSecretNotFound", f"Deleted Secret not found: {name}")
            self.secrets[name] = versions
            return 200, versions[-1]

    def _set(self, name: str, body: bytes) -> tuple[int, Any]:
        if name in self.deleted:
            return 409, {"error": {
                "code": "Conflict", "innererror": {"code": "ObjectIsDeletedButRecoverable"},
                "message": f"Secret {name} is currently in a deleted but recoverable state, and its name cannot "
                           "be reused; in this state, the secret can only be recovered or purged."}}
        try:
            payload = json.loads(body)
        except ValueError:
            return 400, _error("BadParameter", "The request body is not valid JSON.")
        if not isinstance(payload, dict) or not isinstance(payload.get("value"), str):
            return 400, _error("BadParameter", "Property 'value' is required.")
        tags = payload.get("tags")
        if tags is not None and (not isinstance(tags, dict) or len(tags) > 15):
            return 400, _error("BadParameter", "Tags must be a map of at most 15 strings.")
        return 200, self._new_version(name, payload)

    def _get(self, name: str, version: str) -> tuple[int, Any]:
        versions = self.secrets.get(name)
        found = next((v for v in reversed(versions or []) if not version or v["id"].endswith("/" + version)), None)
        if found is None:
            return 404, _error("SecretNotFound", f"A secret with (name/id) {name} was not found in this key vault.")
        if not found["attributes"]["enabled"]:
            return 403, _error("Forbidden", "Operation get is not allowed on a disabled secret.")
        return 200, found

    def _new_version(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        now = int(time.time())
        given = payload.get("attributes")
        attributes: dict[str, Any] = given if isinstance(given, dict) else {}
        bundle = {
            "value": payload["value"], "id": f"{self.url}/secrets/{name}/{uuid.uuid4().hex}",
            "attributes": {"enabled": attributes.get("enabled", True) is not False, "created": now, "updated": now,
                           "recoveryLevel": "Recoverable+Purgeable", "recoverableDays": 90},
            "tags": dict(payload.get("tags") or {}),
        }
        if isinstance(payload.get("contentType"), str):
            bundle["contentType"] = payload["contentType"]
        self.secrets.setdefault(name, []).append(bundle)
        return bundle
