"""Files encrypted at rest in a repository: ``ansible_vault/ansible_vault_file`` and
``git_crypt/git_crypt_file``.

As in SecretZero, the file is the provider's (``vault_file``, ``secret_file``) with its ``format``
(yaml by default, json or dotenv); each target names only the ``key`` it sets, the secret's name
by default. Both files are confined like ``local/file`` and written atomically, mode 0600 when
new, never through a symbolic link; other keys are kept.

- Ansible Vault: the file is the vault-encrypted text (``ansible-vault view`` shows it), encrypted
  with ansible-core's own VaultLib. The password is the provider's ``vault_password``, else the
  content of ``vault_password_file``, else the environment variable ``vault_password_env`` names
  (``ANSIBLE_VAULT_PASSWORD`` by default). Drift decrypts the file.
- git-crypt: the work tree holds the plain text and git-crypt's filter encrypts it when it is
  committed. The file must lie where the repository's ``.gitattributes`` sets ``filter=git-crypt``
  (``git check-attr``), else nothing is written: a plain file there would be committed as is.
"""

from __future__ import annotations

import os
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from secretsapi.service.definition.egress import ENV_SETTING
from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.formats import FORMATS, FileFormat
from secretsapi.service.targets.formats.errors import FormatError
from secretsapi.service.targets.ids import secretzero_target_id
from secretsapi.service.targets.paths import Confined, confined_path, lexical_key, read_bytes, read_text, write_text
from secretsapi.service.targets.providers import Provider, provider_of, read_secret_file
from secretsapi.service.targets.remote import collect, load_sdk, placement_key
from secretsapi.service.targets.schema import AuthKind, KindSchema, ProviderSchema, Setting
from secretsapi.service.util.hashing import sha256_text

FILE_FORMATS = ("yaml", "json", "dotenv")  # SecretZero's three for these providers
DEFAULT_VAULT_VARIABLE = "ANSIBLE_VAULT_PASSWORD"
GIT_CRYPT_HEADER = b"\x00GITCRYPT\x00"
GIT_TIMEOUT = 10.0  # seconds for one `git` call; it reads only the repository's attributes


_KEY = {"key": Setting("string", "key in the provider's file; the secret (or field) name by default")}
_FORMAT = Setting("string", "yaml | json | dotenv", "yaml", choices=FILE_FORMATS)
_FILE_ID = "SecretZero's: `<alias>/<kind>/`"

ANSIBLE_VAULT = ProviderSchema(
    "ansible_vault", "Ansible Vault",
    "An Ansible Vault encrypted file (ansible-core's VaultLib; `ansible-vault view` decrypts it), inside "
    "the allowed target roots.",
    config={"vault_file": Setting("string", "the encrypted file, relative to the definition folder", required=True),
            "format": _FORMAT},
    example={"vault_file": "secrets/vault.yml"},
    auth_kinds=(AuthKind("ambient"), AuthKind("password"), AuthKind("password_env")),
    auth_config={
        "vault_password": Setting("string", "vault password"),
        "vault_password_file": Setting("string", "file holding the vault password (inside the allowed target roots)"),
        "vault_password_env": Setting("string", "environment variable holding the vault password",
                                      DEFAULT_VAULT_VARIABLE),
    },
)
GIT_CRYPT = ProviderSchema(
    "git_crypt", "git-crypt",
    "A plain-text file in an unlocked git-crypt repository, where .gitattributes sets filter=git-crypt "
    "(encrypted when committed).",
    config={"secret_file": Setting("string", "the file, relative to the definition folder", required=True),
            "format": _FORMAT},
    example={"secret_file": "secrets/app.yaml"},
    auth_kinds=(AuthKind("ambient"),),
)
PROVIDERS = (ANSIBLE_VAULT, GIT_CRYPT)


class _KeyedFileKind(Kind, ABC):
    """A key of a file the provider names; subclasses turn the file's bytes into its plain text."""

    file_setting = ""

    def target_id(self, target: TargetSpec, ctx: TargetContext) -> str:
        """SecretZero's: ``<alias>/<kind>/`` (its targets name only a key, which is not in the id)."""
        return secretzero_target_id(target)

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        path = provider_of(target, ctx).settings.get(self.file_setting)
        return f"{target.provider}:{path}" if isinstance(path, str) else target.provider

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        """The file: two aliases naming one file take turns (and one lock) like one alias."""
        path = provider_of(target, ctx).settings.get(self.file_setting)
        if not isinstance(path, str):
            return (self.type, target.provider)  # the write reports the missing setting
        return (self.type, lexical_key(ctx.base_dir, {"path": path}, "path"))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        """Set every key of the group with one decryption and one atomic write."""
        if not items:
            return {}
        provider, path, location, fmt = self._file([p.target for p, _ in items], ctx)
        updates = collect(items, placement_key, location)
        existing = self._plain(provider, path, location, ctx)
        try:
            text = fmt.rewrite(existing, updates)
        except FormatError as exc:
            raise TargetError(f"{location}: {exc}") from None
        if text != existing:
            write_text(path, self._stored(provider, text, location, ctx), location)
        return {key: sha256_text(value) for key, value in updates.items()}

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        provider, path, location, fmt = self._file([p.target for p in items], ctx)
        text = self._plain(provider, path, location, ctx)
        if text is None:
            return {p.key: ReadBack(False, None, location) for p in items}
        try:
            stored = fmt.load(text)
        except FormatError as exc:
            raise TargetError(f"{location}: {exc}") from None
        found = {}
        for p in items:
            value = stored.get(p.key)
            if p.key not in stored:
                found[p.key] = ReadBack(False, None, location)
            else:
                text_value = value if isinstance(value, str) else str(value)
                found[p.key] = ReadBack(True, sha256_text(text_value), location, text_value)
        return found

    def _file(self, targets: Sequence[TargetSpec], ctx: TargetContext
              ) -> tuple[Provider, Confined, str, FileFormat]:
        """The group's file, through its first target's provider; every provider naming it must
        agree with that one (format, password), since one write serves them all."""
        target = targets[0]
        provider = provider_of(target, ctx)
        others = {t.provider for t in targets if provider_of(t, ctx).settings != provider.settings}
        if others:
            raise TargetError(f"providers '{target.provider}' and '{sorted(others)[0]}' name one file "
                              "with different settings")
        if provider.kind != self.type.partition("/")[0]:
            raise TargetError(f"{self.type} targets need a provider of kind "
                              f"'{self.type.partition('/')[0]}' ('{target.provider}' is '{provider.kind}')")
        value = provider.text(self.file_setting)
        if value is None:
            raise TargetError(f"provider '{provider.alias}' needs config.{self.file_setting}")
        location = f"{provider.alias}:{value}"
        name = str(provider.settings.get("format") or "yaml").strip().lower()
        if name not in FILE_FORMATS:
            raise TargetError(f"provider '{provider.alias}': format '{name}' is not one of "
                              f"{', '.join(FILE_FORMATS)}")
        path = confined_path(ctx.base_dir, {"path": value}, "path", ctx.target_roots, ctx.service_paths)
        return provider, path, location, FORMATS[name]

    @abstractmethod
    def _plain(self, provider: Provider, path: Confined, location: str, ctx: TargetContext) -> str | None:
        """The file's plain text, None when it does not exist."""

    @abstractmethod
    def _stored(self, provider: Provider, text: str, location: str, ctx: TargetContext) -> str:
        """What the file holds for plain ``text``."""


class AnsibleVaultFileKind(_KeyedFileKind):
    operators_store = False  # a file of the definition's folder, encrypted with the server's password
    schema = KindSchema(
        "ansible_vault/ansible_vault_file",
        "A key in the Ansible Vault encrypted file the provider names (config.vault_file, config.format "
        "yaml | json | dotenv); decrypts with `ansible-vault view`. The password: the provider's "
        "vault_password, else vault_password_file, else the variable vault_password_env names "
        f"({DEFAULT_VAULT_VARIABLE} by default). Needs the 'ansible-core' package.",
        _KEY, target_id=_FILE_ID)
    file_setting = "vault_file"

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        """The password from the server's environment (``vault_password_env``)."""
        provider = provider_of(target, ctx)
        return provider.text("vault_password") is None and provider.text("vault_password_file") is None

    def _vault(self, provider: Provider, ctx: TargetContext) -> Any:
        vault = load_sdk("ansible.parsing.vault", "ansible-core", self.type)
        password = provider.text("vault_password")
        password_file = provider.text("vault_password_file")
        if password is None and password_file is not None:
            password = _password_file(password_file, ctx, provider.alias)
        if password is None:
            env_name = _password_variable(provider, ctx)
            password = os.environ.get(env_name) or None
        if not password:
            raise TargetError(f"provider '{provider.alias}': no vault password (vault_password, "
                              f"vault_password_file, or the variable vault_password_env names, "
                              f"{DEFAULT_VAULT_VARIABLE} by default)")
        secret = vault.VaultSecret(password.encode("utf-8"))
        return vault, vault.VaultLib([("default", secret)])

    def _plain(self, provider: Provider, path: Confined, location: str, ctx: TargetContext) -> str | None:
        encrypted = read_bytes(path, location)
        if encrypted is None:
            return None
        module, vault = self._vault(provider, ctx)
        if not module.is_encrypted(encrypted):
            raise TargetError(f"{location}: not an Ansible Vault file; nothing was written over it")
        try:
            plain = vault.decrypt(encrypted)
        except module.AnsibleError:
            # Its message may quote the file; the cause is a wrong password or a damaged file.
            raise TargetError(f"{location}: cannot be decrypted (wrong vault password or a damaged "
                              "file)") from None
        try:
            return str(plain.decode("utf-8"))
        except UnicodeDecodeError:
            raise TargetError(f"{location}: decrypted content is not UTF-8 text") from None

    def _stored(self, provider: Provider, text: str, location: str, ctx: TargetContext) -> str:
        _, vault = self._vault(provider, ctx)
        return str(vault.encrypt(text).decode("ascii"))


def _password_file(path_text: str, ctx: TargetContext, alias: str) -> str:
    """The password file's stripped content; ``read_secret_file`` confines it like every file a
    definition names: a definition may not make the service use any file on the machine as a key."""
    return read_secret_file(os.path.expanduser(path_text), ctx, "vault_password_file", alias)


def _password_variable(provider: Provider, ctx: TargetContext) -> str:
    """The variable holding the vault password: the usual one, or one the definition names, which
    is a server variable like any other (SERVICE_DEFINITION_ENV: none in the service unless listed,
    the service's own settings never), refused naming the setting rather than read."""
    named = provider.text("vault_password_env")
    if named is None or named == DEFAULT_VAULT_VARIABLE:
        return DEFAULT_VAULT_VARIABLE
    if not ctx.egress.readable_variable(named):
        raise TargetError(f"provider '{provider.alias}': vault_password_env names a server variable a definition "
                          f"may not read (list it in {ENV_SETTING}, or give the provider vault_password_file)")
    return named


class GitCryptFileKind(_KeyedFileKind):
    schema = KindSchema(
        "git_crypt/git_crypt_file",
        "A key in the plain-text file the provider names (config.secret_file, config.format yaml | json | "
        "dotenv), inside an unlocked git-crypt repository, which encrypts it when committed. The file must "
        "lie where .gitattributes sets filter=git-crypt; nothing is written otherwise.",
        _KEY, target_id=_FILE_ID)
    file_setting = "secret_file"

    def _plain(self, provider: Provider, path: Confined, location: str, ctx: TargetContext) -> str | None:
        self._check_encrypted_path(path, location)
        data = read_bytes(path, location)
        if data is None:
            return None
        if data.startswith(GIT_CRYPT_HEADER):
            raise TargetError(f"{location}: the repository is locked (run 'git-crypt unlock')")
        return read_text(path, location)

    def _stored(self, provider: Provider, text: str, location: str, ctx: TargetContext) -> str:
        return text

    @staticmethod
    def _check_encrypted_path(path: Confined, location: str) -> None:
        """Refuse a file git-crypt would not encrypt: it would be committed in plain text."""
        folder = _existing_folder(path.path.parent, path.root)
        top = _git(folder, location, "rev-parse", "--show-toplevel")
        if top is None:
            raise TargetError(f"{location}: not inside a git repository (git-crypt encrypts only "
                              "files of one)")
        relative = os.path.relpath(path.path, top.strip())
        answer = _git(Path(top.strip()), location, "check-attr", "filter", "--", relative)
        if answer is None or not answer.rstrip("\n").endswith(": filter: git-crypt"):
            raise TargetError(f"{location}: .gitattributes does not give this file filter=git-crypt, "
                              "so it would be committed unencrypted; nothing was written")


def _existing_folder(folder: Path, root: Path) -> Path:
    """The nearest folder that exists, at most up to the target root (the file may be new)."""
    while not folder.is_dir() and folder != root and folder.parent != folder:
        folder = folder.parent
    return folder


def _git(cwd: Path, location: str, *args: str) -> str | None:
    """``git`` in ``cwd``: its output, None when it fails. Hooks and the fsmonitor of the repository
    never run (neither command uses them), and no system configuration is read."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1",
           "HOME": os.environ.get("HOME", "/nonexistent"), "LC_ALL": "C"}
    try:
        done = subprocess.run(["git", "-c", "core.fsmonitor=false", *args], cwd=cwd, env=env,  # noqa: S603, S607
                              capture_output=True, text=True, timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise TargetError(f"{location}: install git to use git_crypt targets") from None
    except subprocess.TimeoutExpired:
        raise TargetError(f"{location}: git did not answer within {GIT_TIMEOUT:g} seconds") from None
    return done.stdout if done.returncode == 0 else None


KINDS = (AnsibleVaultFileKind(), GitCryptFileKind())
