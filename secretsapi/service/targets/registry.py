"""Target kinds by type, so a new kind plugs in without touching sync or drift."""

from __future__ import annotations

from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetKind

_KINDS: dict[str, TargetKind] = {}


def register(kind: TargetKind) -> TargetKind:
    """Register ``kind`` under ``kind.type``, replacing any earlier one (tests swap in fakes)."""
    _KINDS[kind.type] = kind
    return kind


def get_kind(type: str) -> TargetKind:
    try:
        return _KINDS[type]
    except KeyError:
        known = ", ".join(sorted(_KINDS)) or "none"
        raise TargetError(f"unknown target type '{type}' (known: {known})") from None


def kinds() -> list[TargetKind]:
    return [_KINDS[name] for name in sorted(_KINDS)]


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

    for kind in (LocalFileKind(), LocalTemplateKind(), SsmParameterKind(), SecretsManagerKind(),
                 VaultKvKind(), KubernetesSecretKind()):
        register(kind)
    register(AzureKeyVaultKind())
    register(VercelEnvKind())
    register(GitHubSecretKind())
    register(GitLabVariableKind())
    register(GitLabGroupVariableKind())
    register(JenkinsCredentialKind())
    register(AnsibleVaultFileKind())
    register(GitCryptFileKind())
    register(ExternalSecretKind())
    register(InfisicalKind())


_register_builtins()
