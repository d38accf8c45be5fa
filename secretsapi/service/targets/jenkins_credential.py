"""``jenkins/jenkins_credential``: Jenkins credentials (secret text, or username with password).

Through the Credentials plugin's REST API, in the root (system) store or in a folder's store:
``GET .../credential/<id>/api/json`` says whether it exists; ``POST .../createCredentials`` creates
it and ``POST .../credential/<id>/config.xml`` replaces it, with the credential's XML. Other
credentials are never touched. A crumb (``GET /crumbIssuer/api/json``) is sent with every POST
when the instance issues one; the session keeps the cookie it belongs to.

Jenkins never gives a credential's secret back, nor when it was last changed: drift reports the
target as unverifiable (only a missing credential is drift).

Target id: SecretZero's (``secretzero_ids.recorded_id``), usually ``<provider>/<kind>/``; where
another target of the same secret would share it, this kind's own:
``<provider>/jenkins_credential/[<folder>/]<credential_id>``, with ``@<domain>`` when
the domain is not the global one (``_``).

Provider settings: ``url`` (else JENKINS_URL), ``username`` (else JENKINS_USER, then
JENKINS_USERNAME) and ``token`` or ``token_file`` (an API token; else JENKINS_TOKEN, then
JENKINS_API_TOKEN), ``timeout`` (5 s), ``max_concurrency`` (8). 429 and 503 answers are retried
after ``Retry-After`` (``rest``). JENKINS_TOKEN is the server's: with it, a ``url`` the definition
names must be one the operator lists (``egress``; none by default); JENKINS_URL is the operator's.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET  # builds XML only; nothing is parsed
from collections.abc import Hashable, Sequence
from urllib.parse import quote

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.ids import RecordsSecretZeroIds
from secretsapi.service.targets.providers import CONCURRENCY, TIMEOUT, VERIFY, checked_provider, provider_of
from secretsapi.service.targets.remote import checked_group
from secretsapi.service.targets.rest import base_url, json_body, request, session, status_error, tls_verify
from secretsapi.service.targets.schema import AuthKind, KindSchema, ProviderSchema, Setting, check_text
from secretsapi.service.util.hashing import sha256_text

JENKINS = ProviderSchema(
    "jenkins", "Jenkins",
    "A Jenkins instance's Credentials plugin REST API; JENKINS_URL, JENKINS_USER and JENKINS_TOKEN by default.",
    config={"url": Setting("string", "Jenkins root URL"), "verify": VERIFY, "timeout": TIMEOUT,
            "max_concurrency": CONCURRENCY},
    auth_kinds=tuple(AuthKind(name) for name in ("token", "basic", "env", "ambient")),
    auth_config={
        "username": Setting("string", "Jenkins user"),
        "token": Setting("string", "the user's API token"),
        "token_file": Setting("string", "file holding the API token"),
    },
    addressed=True,
)
PROVIDERS = (JENKINS,)
CREDENTIAL_TYPES = ("string", "username_password")
DEFAULT_DOMAIN = "_"
_CLASSES = {
    "string": "org.jenkinsci.plugins.plaincredentials.impl.StringCredentialsImpl",
    "username_password": "com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl",
}


def _folder(target: TargetSpec) -> str:
    return str(target.config.get("folder") or "").strip("/")


def _domain(target: TargetSpec) -> str:
    return str(target.config.get("domain") or DEFAULT_DOMAIN)


def _id(target: TargetSpec) -> str:
    return str(target.config.get("credential_id"))


def _xml(target: TargetSpec, value: str, description: str) -> bytes:
    config = target.config
    kind = config.get("credential_type") or "string"
    root = ET.Element(_CLASSES[kind])
    ET.SubElement(root, "scope").text = "GLOBAL"
    ET.SubElement(root, "id").text = _id(target)
    ET.SubElement(root, "description").text = description
    if kind == "username_password":
        ET.SubElement(root, "username").text = str(config.get("username"))
        ET.SubElement(root, "password").text = value
    else:
        ET.SubElement(root, "secret").text = value
    return bytes(ET.tostring(root, encoding="utf-8"))


class JenkinsCredentialKind(RecordsSecretZeroIds, Kind):
    schema = KindSchema(
        "jenkins/jenkins_credential",
        "A Jenkins credential (secret text, or username with password) in the root store or a folder's; other "
        "credentials are kept. Jenkins never returns secrets: drift checks only that it exists.",
        {
            "credential_id": Setting("string", "credential id", required=True),
            "description": Setting("string", "credential description; the secret's name by default"),
            "credential_type": Setting("string", "string (secret text) or username_password", "string",
                                       choices=CREDENTIAL_TYPES),
            "username": Setting("string", "username of a username_password credential", strict=False),
            "folder": Setting("string", "folder path (a/b) whose store holds it; the root store by default"),
            "domain": Setting("string", "credentials domain (_ is the global one)", DEFAULT_DOMAIN),
        },
        target_id="SecretZero's, e.g. `jenkins/jenkins_credential/`; own: `jenkins/jenkins_credential/"
                  "[<folder>/]<credential_id>[@<domain>]`",
        example={'credential_id': 'db-password'}
    )

    def check(self, target: TargetSpec, where: str) -> list[str]:
        """A username_password credential needs its username."""
        needed = target.config.get("credential_type") == "username_password"
        return check_text(target.config, "username", where, required=needed)

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        provider = provider_of(target, ctx)
        return provider.token(ctx) is None and provider.text("password") is None

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        folder, domain = _folder(target), _domain(target)
        return (f"{folder}/" if folder else "") + _id(target) + ("" if domain == DEFAULT_DOMAIN else f"@{domain}")

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, target.provider, _folder(target), _domain(target), _id(target))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        if not items:
            return {}
        target = items[0][0].target
        where = checked_group(self, [p.target for p, _ in items], self.location(target, ctx), ctx)
        values = {value for _, value in items}
        if len(values) > 1:
            raise TargetError(f"{where}: credential '{_id(target)}' is given two values")
        value = values.pop()
        description = str(target.config.get("description") or items[0][0].key)
        api = _Api(target, ctx, where)
        body = _xml(target, value, description)
        credential = f"{api.store}/credential/{quote(_id(target), safe='')}"
        if api.exists(credential, "write"):
            api.post(f"{credential}/config.xml", body)
        else:
            api.post(f"{api.store}/createCredentials", body)
        return {p.key: sha256_text(value) for p, _ in items}

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        target = items[0].target
        location = self.location(target, ctx)
        where = checked_group(self, [p.target for p in items], location, ctx)
        api = _Api(target, ctx, where)
        present = api.exists(f"{api.store}/credential/{quote(_id(target), safe='')}", "read")
        return {p.key: ReadBack(present, None, location, verifiable=False) for p in items}


class _Api:
    """One credential's calls: the instance URL, basic auth with an API token, the crumb."""

    def __init__(self, target: TargetSpec, ctx: TargetContext, where: str) -> None:
        provider = checked_provider(target, ctx, JENKINS)
        username = (provider.text("username", "user") or os.environ.get("JENKINS_USER")
                    or os.environ.get("JENKINS_USERNAME"))
        own = provider.token(ctx) or provider.text("password")
        token = own or os.environ.get("JENKINS_TOKEN") or os.environ.get("JENKINS_API_TOKEN")
        given, operator = provider.text("url", "base_url"), os.environ.get("JENKINS_URL")
        if not given and not operator:
            raise TargetError(f"provider '{provider.alias}': no Jenkins URL (set url in the provider, "
                              "or JENKINS_URL)")
        url = provider.address(ctx, JENKINS, given, operator, None,
                               server_credential=None if own or not token else "the server's Jenkins token")
        if not username or not token or not url:
            raise TargetError(f"provider '{provider.alias}': no Jenkins credentials (set username and token "
                              "in the provider's auth, or JENKINS_USER and JENKINS_TOKEN)")
        self.url = base_url(url, provider.alias, "url")
        folder = "".join(f"/job/{quote(part, safe='')}" for part in _folder(target).split("/") if part)
        store = "folder" if folder else "system"
        self.store = f"{self.url}{folder}/credentials/store/{store}/domain/{quote(_domain(target), safe='')}"
        self.timeout = provider.timeout
        self.where = where
        self.http = session((self.url, username, token), {"User-Agent": "secretsapi"},
                            "jenkins/jenkins_credential", tls_verify(provider, ctx), auth=(username, token))
        self._crumb: dict[str, str] | None = None

    def exists(self, credential: str, operation: str) -> bool:
        response = request(self.http, "GET", f"{credential}/api/json", where=self.where, operation=operation,
                           timeout=self.timeout)
        if response.status_code == 404:
            return False
        if response.status_code != 200:
            raise status_error(response, self.where, operation, "no such folder or domain")
        return True

    def post(self, url: str, body: bytes) -> None:
        headers = {"Content-Type": "application/xml; charset=utf-8", **self.crumb()}
        response = request(self.http, "POST", url, where=self.where, operation="write", timeout=self.timeout,
                           data=body, headers=headers)
        if response.status_code not in (200, 201, 204):
            raise status_error(response, self.where, "write", "no such folder or domain")

    def crumb(self) -> dict[str, str]:
        """The CSRF crumb header, or none when the instance issues none (404)."""
        if self._crumb is None:
            response = request(self.http, "GET", f"{self.url}/crumbIssuer/api/json", where=self.where,
                               operation="write", timeout=self.timeout)
            if response.status_code == 404:
                self._crumb = {}
            elif response.status_code != 200:
                raise status_error(response, self.where, "crumb request")
            else:
                body = json_body(response, self.where, "crumb request")
                field, crumb = (body.get("crumbRequestField"), body.get("crumb")) if isinstance(body, dict) else (
                    None, None)
                if not isinstance(field, str) or not isinstance(crumb, str):
                    raise TargetError(f"{self.where}: crumb request failed (unexpected answer)")
                self._crumb = {field: crumb}
        return self._crumb


KINDS = (JenkinsCredentialKind(),)
