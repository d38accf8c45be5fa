"""Test data builders: definitions, projects in a folder, definition files loaded directly, workspaces,
provider blocks, and the SecretZero reference project. Shared by every test package; imported, never a fixture."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import subprocess
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import CommandError, call_command

from secretsapi.service.errors import DefinitionInvalid
from secretsapi.service.loading.loader import load_definition
from secretsapi.service.results import SyncResult
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.peers.http_peer import Peer
from tests.peers.kubernetes_server import KubernetesServer
from tests.peers.vault_server import VaultServer
from tests.tools import require

TEST_KEY = "test-key-4f1b9d0c6a2e"
# The Host of a test client's request to this machine (``HTTP_HOST=LOCAL_HOST``): insecure mode
# answers only loopback Host names (secretsapi/api/loopback.py); the test client sends "testserver".
LOCAL_HOST = "localhost"


class Project:
    """A definition file in a temporary folder, configured as the service's SERVICE_CONFIG."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.definition = root / "Secretfile.yml"
        self.lockfile = root / ".gitsecrets.lock"

    def write(self, document: dict[str, Any] | str) -> Project:
        text = document if isinstance(document, str) else yaml.safe_dump(document, sort_keys=False)
        self.definition.write_text(text)
        return self

    def declare(self, *var_files: str, lane: str = "declared") -> Project:
        """The definition with ``var_files`` declared (``environments.profiles.<lane>.var_files``, no
        default lane, so nothing changes until a request names them): the service lets a request
        name only the var files its definition declares."""
        text = self.definition.read_text()
        doc = yaml.safe_load(text)
        if isinstance(doc, dict):
            profiles = doc.setdefault("environments", {}).setdefault("profiles", {})
            profiles.setdefault(lane, {}).setdefault("var_files", []).extend(var_files)
            return self.write(doc)
        block = {"environments": {"profiles": {lane: {"var_files": list(var_files)}}}}
        return self.write(text + "\n" + yaml.safe_dump(block))

    def lock(self) -> Any:
        return json.loads(self.lockfile.read_text())

    def save_lock(self, data: dict[str, Any]) -> None:
        self.lockfile.write_text(json.dumps(data, indent=2))

    def backdate(self, name: str, days: int) -> None:
        """Pretend ``name`` was created (and last rotated, if ever) ``days`` days ago."""
        data = self.lock()
        when = (datetime.now(UTC) - timedelta(days=days)).isoformat()
        entry = data["secrets"][name]
        entry["created_at"] = entry["updated_at"] = when
        if entry.get("last_rotated"):
            entry["last_rotated"] = when
        self.save_lock(data)


def file_secret(name: str, path: str = "out/app.env", *, kind: str = "random_password", fmt: str | None = None,
                **fields: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"path": path}
    if fmt:
        config["format"] = fmt
    return {"name": name, "kind": kind, "targets": [{"provider": "local", "kind": "file", "config": config}], **fields}


def definition(*secrets: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"version": "1.0", "secrets": list(secrets), **top}


def app_project(root: Path) -> dict[str, Any]:
    """Five secrets in a dotenv file, a JSON file and a template: ``app.conf`` is a target of
    ``redis_password`` only and renders ``postgres_password`` too (written beside the definition)."""
    (root / "app.conf.j2").write_text("redis={{ redis_password }}\npostgres={{ postgres_password }}\n")
    template = {"provider": "local", "kind": "template",
                "config": {"template_path": "app.conf.j2", "output_path": "out/app.conf"}}
    return definition(
        file_secret("postgres_password", kind="random_hex", rotation_period="30d"),
        {**file_secret("redis_password", kind="random_hex", rotation_period="30d"),
         "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/app.env"}}, template]},
        file_secret("session_key", kind="random_hex"),
        file_secret("api_key", "out/keys.json", kind="random_hex"),
        file_secret("jwt_secret", "out/keys.json", kind="random_hex"),
    )


def app_values(root: Path) -> tuple[dict[str, str], dict[str, str]]:
    """``out/app.env``'s and ``out/app.conf``'s ``KEY=value`` lines (random_hex needs no quoting)."""
    env = dict(line.split("=", 1) for line in (root / "out/app.env").read_text().splitlines() if "=" in line)
    conf = dict(line.split("=", 1) for line in (root / "out/app.conf").read_text().splitlines())
    return env, conf


def env_secret(name: str, *, kind: str = "random_hex", fmt: str = "env", **fields: Any) -> dict[str, Any]:
    """A secret whose file moves with the environment: ``out/{{ var.env }}.<fmt>``."""
    return file_secret(name, f"out/{{{{ var.env }}}}.{fmt}", kind=kind, **fields)


def environments(project: Project, *secrets: dict[str, Any], **top: Any) -> Project:
    """``env`` is ``dev`` in the definition and ``prod`` in the var file ``prod.yml``, which the
    definition declares (a request may name it)."""
    (project.root / "prod.yml").write_text("env: prod\n")
    return project.write(definition(*secrets, variables={"env": "dev"}, **top)).declare("prod.yml")


# -- definition files, loaded straight through the engine (the loader, checker and units tests)


def write_definition(folder: Path, doc: Any, name: str = "Secretfile.yml") -> Path:
    path = folder / name
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False))
    return path


def load_document(folder: Path, doc: Any, **kwargs: Any) -> Any:
    """``doc`` written to ``folder`` and loaded, with an empty environment unless one is given."""
    kwargs.setdefault("environ", {})
    return load_definition(write_definition(folder, doc), **kwargs)


def load_errors(folder: Path, doc: Any, **kwargs: Any) -> list[str]:
    with pytest.raises(DefinitionInvalid) as caught:
        load_document(folder, doc, **kwargs)
    return caught.value.errors


def subfolder(folder: Path) -> Path:
    path = folder / "other"
    path.mkdir()
    return path


def bare_secret(**fields: Any) -> dict[str, Any]:
    """A random_string secret named ``s``: no config, no targets, unless given."""
    return {"name": "s", "kind": "random_string", **fields}


# -- a git-crypt repository


def git(root: Path, *args: str) -> bytes:
    """``git`` (or ``git-crypt`` when named first) in ``root``, isolated from the machine's config;
    the test skips (names the package) where the tool is not installed."""
    command = list(args) if args[0] == "git-crypt" else ["git", *args]
    command[0] = require(command[0])
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def git_crypt_repository(root: Path, *encrypted: str) -> Path:
    """``root`` made an unlocked git-crypt repository whose ``.gitattributes`` encrypts ``encrypted``
    (the test skips first, naming the package, where git or git-crypt is missing)."""
    require("git")
    require("git-crypt")
    git(root, "init", "-q", "-b", "main")
    git(root, "git-crypt", "init")
    (root / ".gitattributes").write_text("".join(f"{path} filter=git-crypt diff=git-crypt\n" for path in encrypted))
    return root


# -- the SecretZero reference project

_RELATIVE = Path("shared") / "compat" / "secretzero-0.14.23"


def _locate() -> Path:
    override = os.environ.get("SECRETZERO_COMPAT_DIR")
    if override:
        return Path(override)
    sibling = Path(__file__).resolve().parents[2] / _RELATIVE
    return sibling if sibling.exists() else Path("/work") / _RELATIVE


COMPAT = _locate()


# -- remote stores: provider blocks for the protocol peers, and workspaces over them

AWS_REGION = "us-east-1"


def boto(service: str, endpoint: str) -> Any:
    """A plain boto3 client, for tests that look into the store (or tamper with it) directly."""
    import boto3

    return boto3.session.Session().client(
        service, endpoint_url=endpoint, region_name=AWS_REGION,
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )


def aws_provider(endpoint: str, **config: Any) -> dict[str, Any]:
    return {"kind": "aws",
            "auth": {"kind": "static", "config": {"access_key_id": "testing", "secret_access_key": "testing"}},
            "config": {"region": AWS_REGION, "endpoint_url": endpoint, **config}}


def vault_provider(address: str, token: str = "root-token", **config: Any) -> dict[str, Any]:
    return {"kind": "vault", "auth": {"kind": "token", "config": {"token": token}},
            "config": {"address": address, **config}}


def kube_provider(host: str, token: str = "k8s-token", **config: Any) -> dict[str, Any]:
    return {"kind": "kubernetes", "auth": {"kind": "token", "config": {"token": token}},
            "config": {"host": host, **config}}


def azure_provider(keyvault: Any, **config: Any) -> dict[str, Any]:
    """A service principal of the Key Vault peer's tenant, trusting its throwaway certificate."""
    return {"kind": "azure",
            "auth": {"kind": "service_principal", "config": {
                "tenant_id": keyvault.tenant_id, "client_id": keyvault.client_id,
                "client_secret": keyvault.client_secret}},
            "config": {"vault_url": keyvault.url, "authority_host": keyvault.url, "disable_instance_discovery": True,
                       "connection_verify": str(keyvault.ca), **config}}


def vercel_provider(peer: Any, **config: Any) -> dict[str, Any]:
    return {"kind": "vercel", "auth": {"kind": "token", "config": {"token": peer.token, "team_id": peer.team_id}},
            "config": {"project_id": "prj_app", "api_url": peer.url, **config}}


def secret(name: str, *targets: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"name": name, "kind": "random_string", "config": {"length": 24}, "targets": list(targets), **fields}


def target(provider: str, kind: str, **config: Any) -> dict[str, Any]:
    return {"provider": provider, "kind": kind, "config": config}


def workspace(folder: Path, providers: dict[str, Any], *secrets: dict[str, Any]) -> Workspace:
    path = folder / "Secretfile.yml"
    document = {"version": "1.0", "providers": providers, "secrets": list(secrets)}
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return Workspace(definition_path=path, lock_timeout=10)


IDS = {
    "db_password": "aws/ssm_parameter//app/db_password",
    "api_key": "aws/secrets_manager/app/api_key",
    "vault_token": "vault/vault_kv/secret/app/config#token",
    "k8s_password": "cluster/kubernetes_secret/apps/app-secrets/DB_PASSWORD",
}


def every_kind_workspace(tmp_path: Path, aws: str, vault: VaultServer, kube: KubernetesServer) -> Workspace:
    providers = {"aws": aws_provider(aws), "vault": vault_provider(vault.url), "cluster": kube_provider(kube.url)}
    return workspace(
        tmp_path, providers,
        secret("db_password", target("local", "file", path="out/app.env"),
               target("aws", "ssm_parameter", name="/app/db_password", description="db")),
        secret("api_key", target("aws", "secrets_manager", name="app/api_key")),
        secret("vault_token", target("vault", "vault_kv", path="app/config", key="token")),
        secret("k8s_password", target("cluster", "kubernetes_secret", secret_name="app-secrets",
                                      namespace="apps", data_key="DB_PASSWORD", labels={"team": "core"})),
    )


def stored_values(aws: str, vault: VaultServer, kube: KubernetesServer) -> dict[str, str]:
    """What each store holds now, read directly from it."""
    ssm, sm = boto("ssm", aws), boto("secretsmanager", aws)
    vault_data = vault.data("secret", "app/config") or {}
    kube_data = kube.data("apps", "app-secrets") or {}
    return {
        "db_password": ssm.get_parameter(Name="/app/db_password", WithDecryption=True)["Parameter"]["Value"],
        "api_key": sm.get_secret_value(SecretId="app/api_key")["SecretString"],
        "vault_token": vault_data["token"],
        "k8s_password": kube_data["DB_PASSWORD"],
    }


def registered_providers() -> str:
    """The provider kinds of the registered target kinds, as validation lists them."""
    from secretsapi.service.targets.registry import kinds

    return ", ".join(sorted({kind.type.partition("/")[0] for kind in kinds()}))


def lock_entries(ws: Workspace) -> dict[str, Any]:
    return dict(json.loads(ws.lockfile_path.read_text())["secrets"])


def named_key(name: str, *scopes: str, expires: timedelta | None = None) -> str:
    """A new named API key row with ``scopes``; returns the key (shown once, as the command does)."""
    from apikeys import keys

    return keys.create(name, list(scopes), expires).key


@contextlib.contextmanager
def usual_umask() -> Iterator[None]:
    """The common default umask (022) for the block, whatever this test process runs with: what
    a server or a file created inside inherits."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def sync_while_held(ws: Workspace, peer: Peer, in_flight: int) -> SyncResult:
    """A sync of ``ws`` while ``peer`` holds its requests, released once ``in_flight`` of them
    wait at the same time (the peer's ``max_in_flight`` then says how many ever did)."""
    peer.hold()
    outcome: list[SyncResult] = []
    thread = threading.Thread(target=lambda: outcome.append(sync(ws)))
    thread.start()
    try:
        assert peer.wait_in_flight(in_flight)
    finally:
        peer.release()
        thread.join(30)
    return outcome[0]


def command_exit(*args: str) -> int:
    """``manage.py <args>`` run in this process (its output dropped): its exit status."""
    try:
        call_command(*args, stdout=StringIO())
    except CommandError as exc:
        return exc.returncode
    return 0


class PickledStore:
    """A shared parse store as another process sees it: every entry pickled on the way in and out."""

    def __init__(self) -> None:
        self.entries: dict[str, bytes] = {}

    def get(self, key: str) -> object | None:
        data = self.entries.get(key)
        return None if data is None else pickle.loads(data)  # noqa: S301 - the test's own bytes

    def has(self, key: str) -> bool:
        return key in self.entries

    def set(self, key: str, value: object) -> None:
        self.entries[key] = pickle.dumps(value)
