"""``vercel/vercel_env``: a secret as one environment variable of a Vercel project.

A variable is a key for a set of environments (``production``, ``preview``, ``development``).
A write lists the project's variables (``GET /v10/projects/{project}/env``): the variable with
that key for exactly those environments is updated (``PATCH /v9/projects/{project}/env/{id}``),
else it is created (``POST /v10/projects/{project}/env``, type ``encrypted``, as SecretZero
does). The project's other variables are never touched; one with the same key for some but not
all of the environments is a conflict the write refuses, rather than deleting it. Drift reads
the value back decrypted (``GET /v1/projects/{project}/env/{id}``), listing each project's
variables once for up to ``batch`` targets. Every request carries the team (``teamId``) when one
is set.

Target id: SecretZero's (``secretzero_ids.recorded_id``), usually ``<provider>/<kind>/``; where
another target of the same secret would share it, this kind's own:
``<provider>/vercel_env/<project>/<secret_name>/<environments, sorted, comma-separated>``.
Without ``secret_name`` the key is the secret's (or template field's) name, which the lockfile
entry holding the id names, and the id is ``<provider>/vercel_env/<project>/<environments>``.

Provider settings: ``token`` or ``token_file`` (else VERCEL_TOKEN), ``team_id`` (else
VERCEL_TEAM_ID), ``project_id`` (a target's own wins), ``api_url`` (default
https://api.vercel.com), ``timeout`` (default 5 s), ``max_concurrency`` (default 8). Requests go
through the one transport (``rest``): 429 and 503 retried after Retry-After or X-RateLimit-Reset,
no redirect followed. VERCEL_TOKEN is the server's: with it, an ``api_url`` the definition names
must be Vercel's own or one the operator lists (``egress``).
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.ids import RecordsSecretZeroIds
from secretsapi.service.targets.providers import CONCURRENCY, TIMEOUT, checked_provider, provider_of
from secretsapi.service.targets.remote import checked_group, collect, digest, sdk_errors, sdk_failure
from secretsapi.service.targets.rest import base_url, request, session
from secretsapi.service.targets.schema import AuthKind, KindSchema, Need, ProviderSchema, Setting
from secretsapi.service.util.hashing import sha256_text

API_URL = "https://api.vercel.com"
ENVIRONMENTS = ("development", "preview", "production")
DEFAULT_ENVIRONMENTS = ("production",)  # SecretZero's default
VERCEL = ProviderSchema(
    "vercel", "Vercel",
    "Vercel's REST API; VERCEL_TOKEN and VERCEL_TEAM_ID by default.",
    config={
        "project_id": Setting("string", "project id or name, for targets that name none"),
        "api_url": Setting("string", "API base URL", API_URL),
        "timeout": TIMEOUT,
        "max_concurrency": CONCURRENCY,
    },
    auth_kinds=tuple(AuthKind(name) for name in ("token", "env", "ambient")),
    auth_config={
        "token": Setting("string", "Vercel access token"),
        "token_file": Setting("string", "file holding the token (relative to the definition folder)"),
        "team_id": Setting("string", "team the project belongs to (teamId)"),
    },
    hosted=(API_URL,),
    addressed=True,
)
PROVIDERS = (VERCEL,)


def _environments(target: TargetSpec) -> tuple[str, ...]:
    """The target's environments, lower-cased and sorted, as SecretZero normalises them."""
    given = target.config.get("environments") or DEFAULT_ENVIRONMENTS
    if not isinstance(given, list | tuple):  # validation refuses it; ids and groups still need a name
        return (str(given),)
    return tuple(sorted({str(e).strip().lower() for e in given}))


def _key(placement: Placement) -> str:
    return str(placement.target.config.get("secret_name") or placement.key)


class VercelEnvKind(RecordsSecretZeroIds, Kind):
    schema = KindSchema(
        "vercel/vercel_env",
        "A Vercel project environment variable (type encrypted) for a set of environments; the project's "
        "other variables are kept.",
        {
            "project_id": Setting("string", "project id or name; the provider's by default"),
            "secret_name": Setting("string", "variable key; the secret (or template field) name by default"),
            "environments": Setting("array", "any of development, preview, production", list(DEFAULT_ENVIRONMENTS),
                                    items="string"),
        },
        needs=(Need(("project_id",), provider=("project_id",)),),
        target_id="SecretZero's, e.g. `vercel/vercel_env/`; own: `vercel/vercel_env/<project>[/<secret_name>]/"
                  "<environments>`",
        example={'project_id': 'prj_app'}
    )

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        return provider_of(target, ctx).token(ctx) is None

    def advise(self, target: TargetSpec, where: str) -> list[str]:
        """Environments Vercel has not: SecretZero accepts them at validation and fails the target
        at sync, as this service does, before any request."""
        problem = _environment_problem(target)
        return [f"{where}: {problem}: this target fails at sync"] if problem else []

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        project = _project(target, ctx)
        key = target.config.get("secret_name") or target.config.get("key")
        return "/".join([project, *([str(key)] if key else []), ",".join(_environments(target))])

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, target.provider, _project(target, ctx), target.config.get("secret_name"),
                _environments(target))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        if not items:
            return {}
        target = items[0][0].target
        where = checked_group(self, [p.target for p, _ in items], self._where([p for p, _ in items], ctx), ctx)
        _refuse(target, where)
        values = collect(items, _key, where)
        api = _Api(target, ctx, where)
        environments = _environments(target)
        with sdk_errors(_error, where, "write"):
            variables = api.variables()
            for key, value in values.items():
                found = _find(variables, key, environments, where)
                if found is None:
                    api.call("POST", "/v10/projects/{project}/env", json={
                        "key": key, "value": value, "type": "encrypted", "target": list(environments)})
                else:
                    api.call("PATCH", f"/v9/projects/{{project}}/env/{quote(found, safe='')}", json={"value": value})
        return {p.key: sha256_text(values[_key(p)]) for p, _ in items}

    batch = 50  # groups read per call (drift): one listing of a project's variables serves them all

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        return self._read(items, ctx, {})

    def read_many(self, groups: Sequence[Sequence[Placement]],
                  ctx: TargetContext) -> list[dict[str, ReadBack] | TargetError]:
        """Read up to ``batch`` groups of one provider, listing each project's variables once."""
        listings: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
        results: list[dict[str, ReadBack] | TargetError] = []
        for items in groups:
            try:
                results.append(self._read(items, ctx, listings))
            except TargetError as exc:
                results.append(exc)
        return results

    def _read(self, items: Sequence[Placement], ctx: TargetContext,
              listings: dict[tuple[str, ...], list[Mapping[str, Any]]]) -> dict[str, ReadBack]:
        if not items:
            return {}
        target = items[0].target
        where = checked_group(self, [p.target for p in items], self._where(items, ctx), ctx)
        _refuse(target, where)
        api = _Api(target, ctx, where)
        environments = _environments(target)
        stored: dict[str, str | None] = {}
        with sdk_errors(_error, where, "read"):
            if api.scope not in listings:
                listings[api.scope] = api.variables()
            variables = listings[api.scope]
            for key in sorted({_key(p) for p in items}):
                found = _find(variables, key, environments, where)
                if found is None:
                    stored[key] = None
                    continue
                body = api.call("GET", f"/v1/projects/{{project}}/env/{quote(found, safe='')}")
                value = body.get("value") if isinstance(body, Mapping) else None
                if not isinstance(value, str):
                    raise TargetError(f"{where}: variable '{key}' cannot be read back decrypted (a sensitive "
                                      "variable?)")
                stored[key] = value
        backs = {}
        for placement in items:
            value = stored[_key(placement)]
            location = f"{api.project}/{_key(placement)}/{','.join(environments)}"
            backs[placement.key] = (ReadBack(False, None, location) if value is None
                                    else ReadBack(True, sha256_text(value), location, value))
        return backs

    @staticmethod
    def _where(placements: Sequence[Placement], ctx: TargetContext) -> str:
        keys = sorted({_key(p) for p in placements})
        project = _project(placements[0].target, ctx)
        return f"{project}/{keys[0]}" if len(keys) == 1 else str(project)


def _environment_problem(target: TargetSpec) -> str | None:
    given = target.config.get("environments")
    if isinstance(given, list) and not all(isinstance(e, str) and e.strip().lower() in ENVIRONMENTS for e in given):
        return f"config.environments may name only {', '.join(ENVIRONMENTS)}"
    return None


def _refuse(target: TargetSpec, where: str) -> None:
    problem = _environment_problem(target)
    if problem:
        raise TargetError(f"{where}: {problem}")


def _project(target: TargetSpec, ctx: TargetContext | None) -> str:
    """The target's project, else its provider's (for ids and errors)."""
    project = target.config.get("project_id")
    if not project and ctx is not None:
        project = provider_of(target, ctx).settings.get("project_id")
    return str(project) if project else "<no project>"


def _find(variables: Sequence[Mapping[str, Any]], key: str, environments: tuple[str, ...], where: str) -> str | None:
    """The id of the variable ``key`` for exactly ``environments`` (and no git branch), or None.

    A variable with that key for some of them but not all is someone else's: refused, not deleted.
    """
    for variable in variables:
        if variable.get("key") != key or variable.get("gitBranch"):
            continue
        targets = variable.get("target")
        targets = {targets} if isinstance(targets, str) else set(targets or ())
        if targets == set(environments) and isinstance(variable.get("id"), str):
            return str(variable["id"])
        if targets & set(environments):
            raise TargetError(f"{where}: variable '{key}' already exists for {', '.join(sorted(targets))}, "
                              f"overlapping {', '.join(environments)}; remove it or name the same environments")
    return None


class _Api:
    """The Vercel REST calls of one target: token, team and project resolved, a session per thread."""

    def __init__(self, target: TargetSpec, ctx: TargetContext, where: str) -> None:
        provider = checked_provider(target, ctx, VERCEL)
        own = provider.token(ctx)
        token = own or os.environ.get("VERCEL_TOKEN")
        if not token:
            raise TargetError(f"provider '{provider.alias}': no Vercel token (set token or token_file in the "
                              "provider's auth, or VERCEL_TOKEN)")
        project = target.config.get("project_id") or provider.text("project_id")
        if not project:
            raise TargetError(f"{where}: no project (set project_id in the target or its provider)")
        self.project = str(project)
        self.team = provider.text("team_id") or os.environ.get("VERCEL_TEAM_ID") or None
        given = provider.text("api_url")
        address = provider.address(ctx, VERCEL, given, None, API_URL,
                                   server_credential=None if own else "the server's VERCEL_TOKEN")
        self.base = base_url(str(address), provider.alias, "api_url")
        self.timeout = provider.timeout
        self.where = where
        self.session = session((self.base, token), {"Authorization": f"Bearer {token}", "User-Agent": "secretsapi"},
                               VercelEnvKind.type, True)
        # What one listing of variables is valid for (the token digested: never kept as a key).
        self.scope = (self.base, self.team or "", self.project, digest(token))

    def call(self, method: str, path: str, json: Any = None) -> Any:
        url = self.base + path.replace("{project}", quote(self.project, safe=""))
        params = {"teamId": self.team} if self.team else None
        response = request(self.session, method, url, where=self.where, operation=method, timeout=self.timeout,
                           params=params, json=json)
        if response.status_code >= 300:
            raise _HttpError(response.status_code, _code(response))
        return response.json() if response.content else None

    def variables(self) -> list[Mapping[str, Any]]:
        body = self.call("GET", "/v10/projects/{project}/env")
        envs = body.get("envs") if isinstance(body, Mapping) else None
        return [e for e in envs if isinstance(e, Mapping)] if isinstance(envs, list) else []


def _code(response: Any) -> str | None:
    """Vercel's error code (``forbidden``, ``not_found``...): a word, never its message."""
    try:
        code = response.json().get("error", {}).get("code")
    except (ValueError, AttributeError):
        return None
    return code if isinstance(code, str) and code.replace("_", "").isalnum() and len(code) <= 64 else None


class _HttpError(Exception):
    def __init__(self, status: int, code: str | None) -> None:
        super().__init__(status)
        self.status = status
        self.code = code


def _error(exc: BaseException, where: str, operation: str) -> TargetError:
    """The HTTP status and Vercel's error code, never a body (it can quote the request)."""
    if isinstance(exc, _HttpError):
        shown = f"{exc.status} {exc.code}" if exc.code else str(exc.status)
        if exc.status in (401, 403):
            return TargetError(f"{where}: permission denied or token rejected ({shown})")
        if exc.status == 404:
            return TargetError(f"{where}: {operation} failed ({shown}: no such project or team)")
        if exc.status == 429:
            return TargetError(f"{where}: throttled by Vercel ({shown})")
        return TargetError(f"{where}: {operation} failed ({shown})")
    return sdk_failure(exc, where, operation)


KINDS = (VercelEnvKind(),)
