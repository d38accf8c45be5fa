"""Target kinds by type, so a new kind plugs in without touching sync or drift."""

from __future__ import annotations

import threading

from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetKind

_KINDS: dict[str, TargetKind] = {}
_builtins_registered = False
_builtins_lock = threading.Lock()


def _kinds() -> dict[str, TargetKind]:
    """The registered kinds, the built-in ones imported on first use: they load the file formats
    and the template engine, which a command that neither parses nor writes never needs (a
    status read from the shared parse cache)."""
    global _builtins_registered
    if not _builtins_registered:
        with _builtins_lock:
            if not _builtins_registered:
                _register_builtins()
                _builtins_registered = True
    return _KINDS


def register(kind: TargetKind) -> TargetKind:
    """Register ``kind`` under ``kind.type``, replacing any earlier one (tests swap in fakes)."""
    _kinds()[kind.type] = kind
    return kind


def get_kind(type: str) -> TargetKind:
    registered = _kinds()
    try:
        return registered[type]
    except KeyError:
        known = ", ".join(sorted(registered)) or "none"
        raise TargetError(f"unknown target type '{type}' (known: {known})") from None


def kinds() -> list[TargetKind]:
    registered = _kinds()
    return [registered[name] for name in sorted(registered)]


def _register_builtins() -> None:
    # Imported here, not at module top, so the kind modules can import this one freely.
    # The remote kinds import their SDKs only when used, so the engine runs without them.
    from secretsapi.service.targets.azure_keyvault import AzureKeyVaultKind
    from secretsapi.service.targets.encrypted_files import AnsibleVaultFileKind, GitCryptFileKind
    from secretsapi.service.targets.external_secret import ExternalSecretKind
    from secretsapi.service.targets.files import LocalFileKind
    from secretsapi.service.targets.github_secret import GitHubSecretKind
    from secretsapi.service.targets.gitlab_variable import GitLabGroupVariableKind, GitLabVariableKind
    from secretsapi.service.targets.infisical import InfisicalKind
    from secretsapi.service.targets.jenkins_credential import JenkinsCredentialKind
    from secretsapi.service.targets.kubernetes_secret import KubernetesSecretKind
    from secretsapi.service.targets.secrets_manager import SecretsManagerKind
    from secretsapi.service.targets.ssm_parameter import SsmParameterKind
    from secretsapi.service.targets.template import LocalTemplateKind
    from secretsapi.service.targets.vault_kv import VaultKvKind
    from secretsapi.service.targets.vercel_env import VercelEnvKind

    # Straight into the table: register() would ask for the built-in kinds again.
    for kind in (LocalFileKind(), LocalTemplateKind(), SsmParameterKind(), SecretsManagerKind(),
                 VaultKvKind(), KubernetesSecretKind(), AzureKeyVaultKind(), VercelEnvKind(), GitHubSecretKind(),
                 GitLabVariableKind(), GitLabGroupVariableKind(), JenkinsCredentialKind(), AnsibleVaultFileKind(),
                 GitCryptFileKind(), ExternalSecretKind(), InfisicalKind()):
        _KINDS[kind.type] = kind
