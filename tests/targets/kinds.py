"""Every target kind the service writes, one entry each: the store it writes to (a fixture), its
provider block, a target's config, the target id the lockfile records (the kind's own where the
spec gives it one, else SecretZero's), how a test reads the value back from the store itself,
and how someone changes it behind the service's back.

Adding a kind is adding one entry to ``KINDS`` (and its peer fixture to this folder's conftest);
``test_all_kinds`` then syncs, rotates, drifts, repairs and dry-runs it with all the others.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tests.factories import aws_provider, azure_provider, boto, kube_provider, vault_provider, vercel_provider

ANSIBLE_VAULT = str(Path(sys.executable).with_name("ansible-vault"))
VAULT_PASSWORD = "vault-pa55word-never-shown"
TOKENS = {"github": "ghp-test-token", "gitlab": "glpat-test-token", "jenkins": "jenkins-api-token"}
CHANGED = "changed-behind-our-back"


@dataclass(frozen=True)
class Kind:
    """One target kind as the tests drive it. ``store`` names the fixture the other callables get
    (a peer, moto's URL, or the project folder); ``secret`` is the secret's name."""

    type: str
    store: str
    alias: str
    provider: Callable[[Any], dict[str, Any] | None]  # None: a built-in provider (local)
    config: Callable[[Any, str], dict[str, Any]]
    target_id: Callable[[Any, str], str]
    # What the store holds for this target, read from the store, None when absent: the value,
    # except where ``holds_value`` is false (the ExternalSecret manifest, which only names it).
    read: Callable[[Any, str], str | None]
    # Changes the target out of band; returns the reason drift must give for it.
    tamper: Callable[[Any, str], str]
    prepare: Callable[[Any], None] = lambda store: None
    write_only: bool = False  # drift cannot read it back: "unverifiable"
    holds_value: bool = True

    def target(self, store: Any, secret: str) -> dict[str, Any]:
        return {"provider": self.alias, "kind": self.type.partition("/")[2], "config": self.config(store, secret)}


def _upper(secret: str) -> str:
    return secret.upper()


def _dashed(secret: str) -> str:
    return secret.replace("_", "-")


# -- local files --------------------------------------------------------------------------------


def _dotenv(root: Path) -> dict[str, str]:
    path = root / "out/app.env"
    if not path.exists():
        return {}
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def _template_read(root: Path, secret: str) -> str | None:
    path = root / f"out/{secret}.txt"
    return path.read_text() if path.exists() else None


def _template_tamper(root: Path, secret: str) -> str:
    (root / f"out/{secret}.txt").unlink()
    return "target_missing"


def _file_tamper(root: Path, secret: str) -> str:
    lines = [line for line in (root / "out/app.env").read_text().splitlines() if not line.startswith(f"{secret}=")]
    (root / "out/app.env").write_text("".join(f"{line}\n" for line in [*lines, f"{secret}={CHANGED}"]))
    return "value_changed"


def _template_config(root: Path, secret: str) -> dict[str, Any]:
    # No newline after the expression: the output is the value itself (the service keeps a trailing one).
    template = root / f"templates/{secret}.j2"
    template.parent.mkdir(exist_ok=True)
    template.write_text(f"{{{{ secrets.{secret} }}}}")
    return {"template_path": f"templates/{secret}.j2", "output_path": f"out/{secret}.txt", "name": secret}


# -- encrypted files in the project's git-crypt repository -------------------------------------


def _vault_view(root: Path) -> dict[str, Any]:
    if not (root / "secrets/vault.yml").exists():
        return {}
    done = subprocess.run([ANSIBLE_VAULT, "view", "--vault-password-file", "vault-pass.txt", "secrets/vault.yml"],
                          cwd=root, capture_output=True, text=True, timeout=60, check=True)
    return dict(yaml.safe_load(done.stdout) or {})


def _vault_tamper(root: Path, secret: str) -> str:
    plain = root / "plain.yml"
    plain.write_text(yaml.safe_dump({**_vault_view(root), secret: CHANGED}))
    subprocess.run([ANSIBLE_VAULT, "encrypt", "--vault-password-file", "vault-pass.txt", "--output",
                    "secrets/vault.yml", "plain.yml"], cwd=root, capture_output=True, timeout=60, check=True)
    plain.unlink()
    return "value_changed"


def _gitcrypt_file(root: Path) -> dict[str, Any]:
    path = root / "secrets/gitcrypt.yaml"
    return dict(yaml.safe_load(path.read_text()) or {}) if path.exists() else {}


def _gitcrypt_tamper(root: Path, secret: str) -> str:
    (root / "secrets/gitcrypt.yaml").write_text(yaml.safe_dump({**_gitcrypt_file(root), secret: CHANGED}))
    return "value_changed"


def _manifest_read(root: Path, secret: str) -> str | None:
    path = root / f"manifests/{secret}.yaml"
    return path.read_text() if path.exists() else None


def _manifest_tamper(root: Path, secret: str) -> str:
    (root / f"manifests/{secret}.yaml").unlink()
    return "target_missing"


# -- AWS (moto's server) ---------------------------------------------------------------------------


def _ssm_read(aws: str, secret: str) -> str | None:
    ssm = boto("ssm", aws)
    try:
        return str(ssm.get_parameter(Name=f"/app/{secret}", WithDecryption=True)["Parameter"]["Value"])
    except ssm.exceptions.ParameterNotFound:
        return None


def _ssm_tamper(aws: str, secret: str) -> str:
    boto("ssm", aws).put_parameter(Name=f"/app/{secret}", Value=CHANGED, Type="SecureString", Overwrite=True)
    return "value_changed"


def _sm_read(aws: str, secret: str) -> str | None:
    sm = boto("secretsmanager", aws)
    try:
        return str(sm.get_secret_value(SecretId=f"app/{secret}")["SecretString"])
    except sm.exceptions.ResourceNotFoundException:
        return None


def _sm_tamper(aws: str, secret: str) -> str:
    boto("secretsmanager", aws).put_secret_value(SecretId=f"app/{secret}", SecretString=CHANGED)
    return "value_changed"


# -- the protocol peers --------------------------------------------------------------------------


def _vault_kv_read(vault: Any, secret: str) -> str | None:
    return (vault.data("secret", f"app/{secret}") or {}).get("password")


def _vault_kv_tamper(vault: Any, secret: str) -> str:
    vault.put("secret", f"app/{secret}", {"password": CHANGED})
    return "value_changed"


def _kube_tamper(kube: Any, secret: str) -> str:
    kube.delete_key("apps", "app-secrets", _upper(secret))
    return "target_missing"


def _keyvault_tamper(keyvault: Any, secret: str) -> str:
    keyvault.put(_dashed(secret), CHANGED)
    return "value_changed"


def _vercel_tamper(vercel: Any, secret: str) -> str:
    vercel.remove(_upper(secret))
    return "target_missing"


def _github_tamper(github: Any, secret: str) -> str:
    # Written after the lockfile's time: the one change a write-only store lets drift see.
    github.overwrite("repos/acme/api", _upper(secret), CHANGED, at=datetime.now(UTC) + timedelta(minutes=1))
    return "unverifiable"


def _github_prepare(github: Any) -> None:
    github.add_repo("acme", "api")


def _gitlab_prepare(kind: str, path: str) -> Callable[[Any], None]:
    def prepare(gitlab: Any) -> None:
        gitlab.add(kind, path)
    return prepare


def _gitlab_read(kind: str, path: str) -> Callable[[Any, str], str | None]:
    def read(gitlab: Any, secret: str) -> str | None:
        variable = gitlab.variable(kind, path, _upper(secret))
        return None if variable is None else str(variable["value"])
    return read


def _gitlab_tamper(kind: str, path: str) -> Callable[[Any, str], str]:
    def tamper(gitlab: Any, secret: str) -> str:
        gitlab.set_value(kind, path, _upper(secret), CHANGED)
        return "value_changed"
    return tamper


def _jenkins_tamper(jenkins: Any, secret: str) -> str:
    jenkins.delete(_dashed(secret))
    return "target_missing"


def _infisical_provider(infisical: Any) -> dict[str, Any]:
    return {"kind": "infisical", "auth": {"kind": "universal_auth", "config": {
        "client_id": infisical.client_id, "client_secret": infisical.client_secret}},
        "config": {"api_url": f"{infisical.url}/api", "workspace_id": "ws-app"}}


def _infisical_tamper(infisical: Any, secret: str) -> str:
    infisical.put("ws-app", "prod", _upper(secret), CHANGED, "/backend")
    return "value_changed"


def _token(alias: str, **config: Any) -> dict[str, Any]:
    return {"kind": alias, "auth": {"kind": "token", "config": {"token": TOKENS[alias]}}, "config": config}


# No secret here has two targets of one kind, so the kinds without an id in the spec record
# SecretZero's: provider alias, kind, then the first of the config's target_id, record_uid, name,
# path and title, which none of their configs sets.
KINDS = [
    Kind("local/file", "repo", "local", provider=lambda root: None,
         config=lambda root, s: {"path": "out/app.env"}, target_id=lambda root, s: "local/file/out/app.env",
         read=lambda root, s: _dotenv(root).get(s), tamper=_file_tamper),
    Kind("local/template", "repo", "local", provider=lambda root: None, config=_template_config,
         target_id=lambda root, s: f"local/template/{s}", read=_template_read, tamper=_template_tamper),
    Kind("ansible_vault/ansible_vault_file", "repo", "repo_ansible",
         provider=lambda root: {"kind": "ansible_vault",
                                "auth": {"kind": "ambient", "config": {"vault_password_file": "vault-pass.txt"}},
                                "config": {"vault_file": "secrets/vault.yml", "format": "yaml"}},
         config=lambda root, s: {"key": s}, target_id=lambda root, s: "repo_ansible/ansible_vault_file/",
         read=lambda root, s: _vault_view(root).get(s), tamper=_vault_tamper),
    Kind("git_crypt/git_crypt_file", "repo", "repo_gitcrypt",
         provider=lambda root: {"kind": "git_crypt", "auth": {"kind": "ambient"},
                                "config": {"secret_file": "secrets/gitcrypt.yaml", "format": "yaml"}},
         config=lambda root, s: {"key": s}, target_id=lambda root, s: "repo_gitcrypt/git_crypt_file/",
         read=lambda root, s: _gitcrypt_file(root).get(s), tamper=_gitcrypt_tamper),
    Kind("kubernetes/external_secret", "repo", "manifests", provider=lambda root: {"kind": "kubernetes"},
         config=lambda root, s: {"secret_name": _dashed(s), "output_path": f"manifests/{s}.yaml",
                                 "backend_key": f"prod/{s}"},
         target_id=lambda root, s: "manifests/external_secret/", read=_manifest_read, tamper=_manifest_tamper,
         holds_value=False),
    Kind("aws/ssm_parameter", "aws", "aws", provider=aws_provider,
         config=lambda aws, s: {"name": f"/app/{s}"}, target_id=lambda aws, s: f"aws/ssm_parameter//app/{s}",
         read=_ssm_read, tamper=_ssm_tamper),
    Kind("aws/secrets_manager", "aws", "aws", provider=aws_provider,
         config=lambda aws, s: {"name": f"app/{s}"}, target_id=lambda aws, s: f"aws/secrets_manager/app/{s}",
         read=_sm_read, tamper=_sm_tamper),
    Kind("vault/vault_kv", "vault", "vault", provider=lambda vault: vault_provider(vault.url),
         config=lambda vault, s: {"path": f"app/{s}", "key": "password"},
         target_id=lambda vault, s: f"vault/vault_kv/secret/app/{s}#password", read=_vault_kv_read,
         tamper=_vault_kv_tamper),
    Kind("kubernetes/kubernetes_secret", "kube", "cluster", provider=lambda kube: kube_provider(kube.url),
         config=lambda kube, s: {"secret_name": "app-secrets", "namespace": "apps", "data_key": _upper(s)},
         target_id=lambda kube, s: f"cluster/kubernetes_secret/apps/app-secrets/{_upper(s)}",
         read=lambda kube, s: (kube.data("apps", "app-secrets") or {}).get(_upper(s)), tamper=_kube_tamper),
    Kind("azure/azure_keyvault", "keyvault", "azure", provider=azure_provider,
         config=lambda kv, s: {"secret_name": _dashed(s)}, target_id=lambda kv, s: "azure/azure_keyvault/",
         read=lambda kv, s: kv.value(_dashed(s)), tamper=_keyvault_tamper),
    Kind("vercel/vercel_env", "vercel", "vercel", provider=vercel_provider,
         config=lambda vercel, s: {"secret_name": _upper(s)},
         target_id=lambda vercel, s: "vercel/vercel_env/",
         read=lambda vercel, s: vercel.value(_upper(s)), tamper=_vercel_tamper),
    Kind("github/github_secret", "github", "github",
         provider=lambda github: _token("github", api_url=github.url, max_concurrency=2),
         config=lambda github, s: {"owner": "acme", "repo": "api", "secret_name": _upper(s)},
         target_id=lambda github, s: "github/github_secret/",
         read=lambda github, s: github.value("repos/acme/api", _upper(s)), tamper=_github_tamper,
         prepare=_github_prepare, write_only=True),
    Kind("gitlab/gitlab_variable", "gitlab", "gitlab", provider=lambda gitlab: _token("gitlab", url=gitlab.url),
         config=lambda gitlab, s: {"project": "team/app", "key": _upper(s)},
         target_id=lambda gitlab, s: "gitlab/gitlab_variable/",
         read=_gitlab_read("projects", "team/app"), tamper=_gitlab_tamper("projects", "team/app"),
         prepare=_gitlab_prepare("projects", "team/app")),
    Kind("gitlab/gitlab_group_variable", "gitlab", "gitlab", provider=lambda gitlab: _token("gitlab", url=gitlab.url),
         config=lambda gitlab, s: {"group": "team", "key": _upper(s)},
         target_id=lambda gitlab, s: "gitlab/gitlab_group_variable/",
         read=_gitlab_read("groups", "team"), tamper=_gitlab_tamper("groups", "team"),
         prepare=_gitlab_prepare("groups", "team")),
    Kind("jenkins/jenkins_credential", "jenkins", "jenkins",
         provider=lambda jenkins: {"kind": "jenkins", "auth": {"kind": "token", "config": {
             "url": jenkins.url, "username": "admin", "token": TOKENS["jenkins"]}}},
         config=lambda jenkins, s: {"credential_id": _dashed(s)},
         target_id=lambda jenkins, s: "jenkins/jenkins_credential/",
         read=lambda jenkins, s: jenkins.secret(_dashed(s)), tamper=_jenkins_tamper, write_only=True),
    Kind("infisical/infisical", "infisical", "infisical", provider=_infisical_provider,
         config=lambda inf, s: {"environment": "prod", "secret_path": "/backend", "secret_name": _upper(s)},
         target_id=lambda inf, s: "infisical/infisical/",
         read=lambda inf, s: inf.value("ws-app", "prod", _upper(s), "/backend"), tamper=_infisical_tamper,
         prepare=lambda inf: inf.add_project("ws-app", folders=("/backend",))),
]

# The first kind, the dotenv file, goes to every secret: the readable copy a repair takes the
# recorded value from when a secret's other stores are write-only or changed. The others are
# dealt out in turn, so each secret has several targets of different kinds.
SECRETS = ("db_password", "api_key", "deploy_token", "signing_key")
EVERY_SECRET = KINDS[0]


def placements() -> list[tuple[str, Kind]]:
    """(secret, kind) for every target of the definition, in definition order."""
    dealt = {secret: [EVERY_SECRET] for secret in SECRETS}
    for index, kind in enumerate(KINDS[1:]):
        dealt[SECRETS[index % len(SECRETS)]].append(kind)
    return [(secret, kind) for secret in SECRETS for kind in dealt[secret]]


def definition(stores: dict[str, Any]) -> dict[str, Any]:
    """The one definition, over the stores the fixtures named by ``Kind.store`` give."""
    providers: dict[str, Any] = {}
    for kind in KINDS:
        store = stores[kind.store]
        kind.prepare(store)
        block = kind.provider(store)
        if block is not None:
            assert providers.setdefault(kind.alias, block) == block, f"{kind.alias} declared twice, differently"
    secrets: dict[str, dict[str, Any]] = {
        name: {"name": name, "kind": "random_string", "config": {"length": 24}, "targets": []} for name in SECRETS}
    for secret, kind in placements():
        secrets[secret]["targets"].append(kind.target(stores[kind.store], secret))
    return {"version": "1.0", "providers": providers, "secrets": list(secrets.values())}

