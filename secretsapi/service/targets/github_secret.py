"""``github/github_secret``: GitHub Actions secrets of a repository, an environment or an organisation.

Through GitHub's REST API: the scope's public key (``GET .../secrets/public-key``), then one
``PUT .../secrets/<name>`` per secret with the value sealed to that key (a libsodium sealed box,
PyNaCl) and its ``key_id``. Other secrets of the scope are never touched. Organisation secrets
also set ``visibility`` (all, private, selected) and the selected repositories (by id, or by
name: looked up with ``GET /repos/<org>/<name>``).

GitHub never gives a secret's value back: a read (``GET .../secrets/<name>``) says whether it
exists and when it was last written (``updated_at``), so drift reports it as unverifiable and
compares that time with the lockfile's (``state.write_only``).

Target id: SecretZero's (``secretzero_ids.recorded_id``), usually ``<provider>/<kind>/``; where
another target of the same secret would share it, this kind's own:
``<provider>/github_secret/<owner>/<repo>[/environments/<environment>]`` or
``<provider>/github_secret/orgs/<org>``, then ``/<secret_name>`` when the config names it (else
the secret's own name is used, which the lockfile entry holding the id already names).

Provider settings: ``token`` or ``token_file`` under auth (else GITHUB_TOKEN, then GH_TOKEN),
``api_url`` (``base_url``, ``url``; else GITHUB_API_URL, else https://api.github.com; GitHub
Enterprise Server: ``https://<host>/api/v3``), ``timeout`` (default 5 s), ``max_concurrency``
(default 8). Secondary rate limits (429, and 403 naming a ``Retry-After``) are retried after the
pause GitHub names (``rest``). GITHUB_TOKEN and GH_TOKEN are the server's: with them, an
``api_url`` the definition names must be api.github.com or one the operator lists (``egress``).
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Hashable, Sequence
from typing import Any
from urllib.parse import quote

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.ids import RecordsSecretZeroIds
from secretsapi.service.targets.providers import CONCURRENCY, TIMEOUT, VERIFY, checked_provider, provider_of
from secretsapi.service.targets.remote import checked_group, collect, load_sdk, same_config
from secretsapi.service.targets.rest import base_url, json_body, request, session, status_error, timestamp, tls_verify
from secretsapi.service.targets.schema import AuthKind, KindSchema, ProviderSchema, Setting, check_text
from secretsapi.service.util.hashing import sha256_text

DEFAULT_API_URL = "https://api.github.com"
VISIBILITIES = ("all", "private", "selected")
API_VERSION = "2022-11-28"
GITHUB = ProviderSchema(
    "github", "GitHub",
    "GitHub's REST API (github.com or GitHub Enterprise Server); GITHUB_TOKEN (then GH_TOKEN) and "
    "GITHUB_API_URL by default.",
    config={
        "api_url": Setting("string", "REST API root (aliases: base_url, url); Enterprise Server: "
                                     "https://<host>/api/v3", DEFAULT_API_URL),
        "verify": VERIFY,
        "timeout": TIMEOUT,
        "max_concurrency": CONCURRENCY,
    },
    auth_kinds=tuple(AuthKind(name) for name in ("token", "env", "ambient")),
    auth_config={
        "token": Setting("string", "personal access token or app installation token"),
        "token_file": Setting("string", "file holding the token"),
    },
    hosted=(DEFAULT_API_URL,),
    addressed=True,
)
PROVIDERS = (GITHUB,)


def _name(placement: Placement) -> str:
    return str(placement.target.config.get("secret_name") or placement.key)


def _scope(target: TargetSpec, *, quoted: bool = False) -> str:
    """The API path of the target's secrets: ``repos/o/r``, ``repos/o/r/environments/e``, ``orgs/o``
    (``quoted``: each name percent-encoded, for URLs)."""
    config = target.config

    def part(key: str) -> str:
        return quote(str(config.get(key)), safe="") if quoted else str(config.get(key))

    if config.get("org") and not config.get("repo"):
        return f"orgs/{part('org')}"
    scope = f"repos/{part('owner')}/{part('repo')}"
    return f"{scope}/environments/{part('environment')}" if config.get("environment") else scope


def _secrets(target: TargetSpec) -> str:
    """The API path of the scope's secrets: ``.../actions/secrets``, or an environment's ``.../secrets``."""
    scope = _scope(target, quoted=True)
    return f"{scope}/secrets" if target.config.get("environment") and target.config.get("repo") else (
        f"{scope}/actions/secrets")


class GitHubSecretKind(RecordsSecretZeroIds, Kind):
    schema = KindSchema(
        "github/github_secret",
        "A GitHub Actions secret of a repository, an environment or an organisation, sealed with the scope's "
        "public key; other secrets are kept. GitHub never returns values: drift compares its update time "
        "with the lockfile's.",
        {
            "owner": Setting("string", "repository owner (user or organisation)", strict=False),
            "repo": Setting("string", "repository name", strict=False),
            "environment": Setting("string", "deployment environment of the repository (environment secret)"),
            "org": Setting("string", "organisation, for an organisation secret (without repo)", strict=False),
            "visibility": Setting("string", "organisation secret: all, private or selected repositories", "all",
                                  choices=VISIBILITIES),
            "selected_repository_ids": Setting("array", "organisation secret, visibility selected: repository ids",
                                               strict=False),
            "selected_repositories": Setting("array", "organisation secret, visibility selected: repository names "
                                                      "in the organisation", strict=False),
            "secret_name": Setting("string", "name of the secret; the secret (or template field) name by default"),
        },
        target_id="SecretZero's, e.g. `github/github_secret/`; own: `github/github_secret/<owner>/<repo>"
                  "[/environments/<env>]` or `github/github_secret/orgs/<org>`, plus `/<secret_name>` when set",
        example={'owner': 'acme', 'repo': 'api'}
    )
    # GitHub reports when a secret was written, never its value: the lockfile keeps the time of
    # each write here, for drift to compare (``state.write_only``).
    records_write_time = True

    def check(self, target: TargetSpec, where: str) -> list[str]:
        """A repository (``owner`` and ``repo``) or an organisation (``org`` without ``repo``), and
        the organisation-only settings only there."""
        config = target.config
        problems: list[str] = []
        if config.get("org") and not config.get("repo"):
            problems += check_text(config, "org", where, required=True)
            if config.get("environment") is not None:
                problems.append(f"{where}: config.environment needs owner and repo (environments belong "
                                "to a repository)")
            ids = config.get("selected_repository_ids")
            if ids is not None and (not isinstance(ids, list) or not all(
                    isinstance(i, int) and not isinstance(i, bool) and i > 0 for i in ids)):
                problems.append(f"{where}: config.selected_repository_ids must be a list of repository ids")
            names = config.get("selected_repositories")
            if names is not None and (not isinstance(names, list) or not all(
                    isinstance(n, str) and n and "/" not in n for n in names)):
                problems.append(f"{where}: config.selected_repositories must be a list of repository names")
            return problems
        problems += check_text(config, "owner", where, required=True)
        problems += check_text(config, "repo", where, required=True)
        for key in ("visibility", "selected_repository_ids", "selected_repositories"):
            if config.get(key) is not None:
                problems.append(f"{where}: config.{key} applies to organisation secrets only (org without repo)")
        return problems

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        return provider_of(target, ctx).token(ctx) is None

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        name = target.config.get("secret_name")
        return _scope(target).removeprefix("repos/") + (f"/{name}" if name else "")

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, target.provider, _scope(target))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        if not items:
            return {}
        target = items[0][0].target
        scope = _scope(target)
        where = checked_group(self, [p.target for p, _ in items], scope.removeprefix("repos/"), ctx)
        config = same_config([p for p, _ in items], ("visibility", "selected_repository_ids",
                                                     "selected_repositories"), where)
        values = collect(items, _name, where)
        nacl = load_sdk("nacl.public", "pynacl", self.type)  # before any request
        api = _Api(self, target, ctx, where)
        key = api.get(f"{_secrets(target)}/public-key", "write")
        key_id, sealed_to = key.get("key_id"), key.get("key")
        if not isinstance(key_id, str) or not isinstance(sealed_to, str):
            raise TargetError(f"{where}: write failed (the public key answer lacks key_id or key)")
        extra = self._organisation(config, api) if scope.startswith("orgs/") else {}
        for name, value in values.items():
            body = {"encrypted_value": _seal(nacl, value, sealed_to, where), "key_id": key_id, **extra}
            api.put(f"{_secrets(target)}/{quote(name, safe='')}", body)
        return {p.key: sha256_text(values[_name(p)]) for p, _ in items}

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        target = items[0].target
        scope = _scope(target)
        where = checked_group(self, [p.target for p in items], scope.removeprefix("repos/"), ctx)
        api = _Api(self, target, ctx, where)
        backs = {}
        for placement in items:
            name = _name(placement)
            location = f"{scope.removeprefix('repos/')}/{name}"
            found = api.get(f"{_secrets(target)}/{quote(name, safe='')}", "read",
                            missing_ok=True)
            if found is None:
                backs[placement.key] = ReadBack(False, None, location, verifiable=False)
                continue
            backs[placement.key] = ReadBack(True, None, location, verifiable=False,
                                            updated_at=timestamp(found.get("updated_at")))
        return backs

    @staticmethod
    def _organisation(config: Any, api: _Api) -> dict[str, Any]:
        visibility = config.get("visibility") or "all"
        extra: dict[str, Any] = {"visibility": visibility}
        if visibility == "selected":
            ids = list(config.get("selected_repository_ids") or [])
            org = config["org"]
            for name in config.get("selected_repositories") or []:
                repo = api.get(f"repos/{quote(org, safe='')}/{quote(name, safe='')}", "repository lookup")
                if not isinstance(repo.get("id"), int):
                    raise TargetError(f"{api.where}: repository lookup failed (the answer has no id)")
                ids.append(repo["id"])
            extra["selected_repository_ids"] = ids
        return extra


class _Api:
    """One group's calls: GitHub's base URL, token and headers, its throttling, its errors."""

    def __init__(self, kind: GitHubSecretKind, target: TargetSpec, ctx: TargetContext, where: str) -> None:
        provider = checked_provider(target, ctx, GITHUB)
        own = provider.token(ctx)
        token = own or os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
        if not token:
            raise TargetError(f"provider '{provider.alias}': no GitHub token (set token or token_file in "
                              "the provider's auth, or GITHUB_TOKEN)")
        address = provider.address(ctx, GITHUB, provider.text("api_url", "base_url", "url"),
                                   os.environ.get("GITHUB_API_URL"), DEFAULT_API_URL,
                                   server_credential=None if own else "the server's GITHUB_TOKEN")
        self.url = base_url(str(address), provider.alias, "api_url")
        self.timeout = provider.timeout
        self.where = where
        self.http = session((self.url, token), {
            "Accept": "application/vnd.github+json", "Authorization": f"Bearer {token}",
            "X-GitHub-Api-Version": API_VERSION, "User-Agent": "secretsapi"}, kind.type, tls_verify(provider, ctx))

    def get(self, path: str, operation: str, *, missing_ok: bool = False) -> Any:
        response = request(self.http, "GET", f"{self.url}/{path}", where=self.where, operation=operation,
                           timeout=self.timeout)
        if response.status_code == 404 and missing_ok:
            return None
        if response.status_code != 200:
            raise status_error(response, self.where, operation, "no such repository, environment or "
                                                                "organisation")
        body = json_body(response, self.where, operation)
        if not isinstance(body, dict):
            raise TargetError(f"{self.where}: {operation} failed (unexpected answer)")
        return body

    def put(self, path: str, body: dict[str, Any]) -> None:
        response = request(self.http, "PUT", f"{self.url}/{path}", where=self.where, operation="write",
                           timeout=self.timeout, json=body)
        if response.status_code not in (201, 204):
            raise status_error(response, self.where, "write", "no such repository, environment or organisation")


def _seal(public: Any, value: str, public_key: str, where: str) -> str:
    """``value`` sealed to GitHub's base64 public key (libsodium ``crypto_box_seal``) with
    ``nacl.public``, base64."""
    try:
        box = public.SealedBox(public.PublicKey(base64.b64decode(public_key, validate=True)))
        sealed = box.encrypt(value.encode("utf-8"))
    except (binascii.Error, ValueError, TypeError):
        raise TargetError(f"{where}: write failed (the scope's public key is not a valid key)") from None
    except Exception as exc:  # nacl's CryptoError for a key of the wrong length, or one libsodium refuses
        raise TargetError(f"{where}: write failed (the scope's public key is not a valid key: "
                          f"{type(exc).__name__})") from None
    return base64.b64encode(sealed).decode("ascii")


KINDS = (GitHubSecretKind(),)
