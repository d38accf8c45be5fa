"""What target and provider kinds exist, and which providers a definition declares (no credentials).

Pure functions over the registry and a parsed definition, for the discovery endpoints.
Declared providers never show credentials: auth blocks are reduced to their kind and key
names, and config values under credential-like keys (token, secret, password, key...) or
inside URLs' user info are redacted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from secretsapi.service.definition.model import Definition
from secretsapi.service.targets import (
    aws,
    azure_keyvault,
    github_secret,
    gitlab_variable,
    infisical,
    jenkins_credential,
    kubernetes_secret,
    vault_kv,
    vercel_env,
)
from secretsapi.service.targets.registry import kinds

REDACTED = "***"
_CREDENTIAL_KEY = re.compile(r"token|secret|passw|pwd|credential|private|key|auth|session|cookie|"
                             r"signature|cert", re.IGNORECASE)


def _opt(type_: str, default: Any, description: str) -> dict[str, Any]:
    return {"type": type_, "default": default, "description": description}


_TIMEOUT = _opt("number", 5, "seconds before a remote call gives up (connect and read)")
_VERIFY = _opt("boolean", True, "verify TLS; or the path of a CA bundle (a private CA)")
_CONCURRENCY = _opt("integer", 8, "calls in flight at once per operation, 1 to 64 (1: one after another)")

# The settings each provider kind reads (its module's docstring has the details). Settings
# may sit in the provider's `config` or its `auth.config`; credentials belong in auth.
PROVIDER_KINDS: dict[str, dict[str, Any]] = {
    "local": {
        "description": "Files inside the allowed target roots (SERVICE_TARGET_ROOTS, by default "
                       "the definition folder); needs no providers entry.",
        "config": {},
        "auth": {"kinds": [], "config": {}},
    },
    "aws": {
        "description": "Amazon Web Services through boto3; unset settings come from boto3's usual "
                       "chain (AWS_* environment, shared files, instance metadata).",
        "config": {
            "region": _opt("string", None, "AWS region; AWS_REGION by default"),
            "endpoint_url": _opt("string", None, "endpoint override, e.g. a local test server"),
            "profile": _opt("string", None, "profile of the shared AWS config files"),
            "timeout": _TIMEOUT,
            "max_concurrency": _CONCURRENCY,
        },
        "auth": {
            "kinds": list(aws.AUTH_KINDS),
            "config": {
                "access_key_id": _opt("string", None, "access key id (with secret_access_key)"),
                "secret_access_key": _opt("string", None, "secret access key"),
                "session_token": _opt("string", None, "session token of temporary credentials"),
                "role_arn": _opt("string", None, "auth kind assume_role: the role STS AssumeRole "
                                                 "gives credentials of"),
                "session_name": _opt("string", "secretzero-session", "assume_role: the role "
                                                                     "session's name"),
                "external_id": _opt("string", None, "assume_role: the external id the role requires"),
                "sts_endpoint_url": _opt("string", None, "assume_role: STS endpoint override "
                                                         "(endpoint_url by default)"),
            },
        },
    },
    "vault": {
        "description": "HashiCorp Vault through hvac; VAULT_ADDR, VAULT_TOKEN (then ~/.vault-token), "
                       "VAULT_NAMESPACE, VAULT_CACERT and VAULT_SKIP_VERIFY by default.",
        "config": {
            "address": _opt("string", None, "Vault URL (alias: url)"),
            "namespace": _opt("string", None, "Vault Enterprise namespace"),
            "verify": _opt("boolean", True, "verify TLS; or the path of a CA bundle"),
            "timeout": _TIMEOUT,
            "max_concurrency": _CONCURRENCY,
        },
        "auth": {
            "kinds": list(vault_kv.AUTH_KINDS),
            "config": {
                "token": _opt("string", None, "Vault token"),
                "token_file": _opt("string", None, "file holding the token (relative to the "
                                                   "definition folder)"),
                "role_id": _opt("string", None, "auth kind approle: the AppRole's role id"),
                "secret_id": _opt("string", None, "approle: the secret id"),
                "approle_mount": _opt("string", "approle", "approle: the auth method's mount"),
            },
        },
    },
    "ansible_vault": {
        "description": "An Ansible Vault encrypted file (ansible-core's VaultLib; `ansible-vault "
                       "view` decrypts it), inside the allowed target roots.",
        "config": {
            "vault_file": _opt("string", None, "the encrypted file, relative to the definition folder"),
            "format": _opt("string", "yaml", "yaml | json | dotenv, inside the vault"),
        },
        "auth": {
            "kinds": ["ambient", "password", "password_env"],
            "config": {
                "vault_password": _opt("string", None, "vault password"),
                "vault_password_file": _opt("string", None, "file holding the vault password "
                                                           "(inside the allowed target roots)"),
                "vault_password_env": _opt("string", "ANSIBLE_VAULT_PASSWORD",
                                           "environment variable holding the vault password"),
            },
        },
    },
    "git_crypt": {
        "description": "A plain-text file in an unlocked git-crypt repository, where .gitattributes "
                       "sets filter=git-crypt (encrypted when committed).",
        "config": {
            "secret_file": _opt("string", None, "the file, relative to the definition folder"),
            "format": _opt("string", "yaml", "yaml | json | dotenv"),
        },
        "auth": {"kinds": ["ambient"], "config": {}},
    },
    "kubernetes": {
        "description": "A Kubernetes cluster through the kubernetes client: host and token, else a "
                       "kubeconfig (KUBECONFIG, ~/.kube/config), else the in-cluster service account.",
        "config": {
            "host": _opt("string", None, "API server URL, used with token or token_file"),
            "kubeconfig": _opt("string", None, "kubeconfig path (relative to the definition folder)"),
            "context": _opt("string", None, "kubeconfig context; its current context by default"),
            "verify": _opt("boolean", True, "verify the API server's TLS certificate (with host)"),
            "ca_cert": _opt("string", None, "CA bundle path for the API server (with host)"),
            "timeout": _TIMEOUT,
            "max_concurrency": _CONCURRENCY,
        },
        "auth": {
            "kinds": list(kubernetes_secret.AUTH_KINDS),
            "config": {
                "token": _opt("string", None, "bearer token (with host)"),
                "token_file": _opt("string", None, "file holding the bearer token"),
            },
        },
    },
    "github": {
        "description": "GitHub's REST API (github.com or GitHub Enterprise Server); GITHUB_TOKEN (then "
                       "GH_TOKEN) and GITHUB_API_URL by default.",
        "config": {
            "api_url": _opt("string", github_secret.DEFAULT_API_URL,
                            "REST API root (aliases: base_url, url); Enterprise Server: https://<host>/api/v3"),
            "verify": _VERIFY,
            "timeout": _TIMEOUT,
            "max_concurrency": _CONCURRENCY,
        },
        "auth": {
            "kinds": list(github_secret.AUTH_KINDS),
            "config": {
                "token": _opt("string", None, "personal access token or app installation token"),
                "token_file": _opt("string", None, "file holding the token"),
            },
        },
    },
    "gitlab": {
        "description": "GitLab's REST API v4 (gitlab.com or a self-managed instance); GITLAB_TOKEN and "
                       "GITLAB_URL (then CI_SERVER_URL) by default.",
        "config": {
            "url": _opt("string", gitlab_variable.DEFAULT_URL, "instance address (alias: base_url)"),
            "verify": _VERIFY,
            "timeout": _TIMEOUT,
            "max_concurrency": _CONCURRENCY,
        },
        "auth": {
            "kinds": list(gitlab_variable.AUTH_KINDS),
            "config": {
                "token": _opt("string", None, "personal, group or project access token (api scope)"),
                "token_file": _opt("string", None, "file holding the token"),
            },
        },
    },
    "jenkins": {
        "description": "A Jenkins instance's Credentials plugin REST API; JENKINS_URL, JENKINS_USER and "
                       "JENKINS_TOKEN by default.",
        "config": {
            "url": _opt("string", None, "Jenkins root URL"),
            "verify": _VERIFY,
            "timeout": _TIMEOUT,
            "max_concurrency": _CONCURRENCY,
        },
        "auth": {
            "kinds": list(jenkins_credential.AUTH_KINDS),
            "config": {
                "username": _opt("string", None, "Jenkins user"),
                "token": _opt("string", None, "the user's API token"),
                "token_file": _opt("string", None, "file holding the API token"),
            },
        },
    },
    "azure": {
        "description": "Azure Key Vault through azure-keyvault-secrets and azure-identity: a service "
                       "principal from the provider's auth or AZURE_TENANT_ID, AZURE_CLIENT_ID and "
                       "AZURE_CLIENT_SECRET; else managed identity, cli, or DefaultAzureCredential.",
        "config": {
            "vault_url": _opt("string", None, "vault URL, for targets that name none"),
            "authority_host": _opt("string", None, "Microsoft Entra authority; AZURE_AUTHORITY_HOST "
                                                   "or the public cloud by default"),
            "disable_instance_discovery": _opt("boolean", False, "skip authority validation, for "
                                                                 "authorities Microsoft does not know"),
            "connection_verify": _opt("string", True, "true, or the path of a CA bundle to verify "
                                                      "the vault and authority with"),
            "timeout": _TIMEOUT,
            "max_concurrency": _CONCURRENCY,
        },
        "auth": {
            "kinds": list(azure_keyvault.AUTH_KINDS),
            "config": {
                "tenant_id": _opt("string", None, "tenant (directory) id of the service principal"),
                "client_id": _opt("string", None, "application (client) id"),
                "client_secret": _opt("string", None, "client secret of the service principal"),
            },
        },
    },
    "vercel": {
        "description": "Vercel's REST API; VERCEL_TOKEN and VERCEL_TEAM_ID by default.",
        "config": {
            "project_id": _opt("string", None, "project id or name, for targets that name none"),
            "api_url": _opt("string", vercel_env.API_URL, "API base URL"),
            "timeout": _TIMEOUT,
            "max_concurrency": _CONCURRENCY,
        },
        "auth": {
            "kinds": list(vercel_env.AUTH_KINDS),
            "config": {
                "token": _opt("string", None, "Vercel access token"),
                "token_file": _opt("string", None, "file holding the token (relative to the "
                                                   "definition folder)"),
                "team_id": _opt("string", None, "team the project belongs to (teamId)"),
            },
        },
    },
    "infisical": {
        "description": "Infisical's REST API (app.infisical.com or a self-hosted instance); INFISICAL_TOKEN "
                       "(then INFISICAL_SERVICE_TOKEN) and INFISICAL_API_URL by default.",
        "config": {
            "workspace_id": _opt("string", None, "project (workspace) id, for targets that name none "
                                                 "(alias: project_id)"),
            "environment": _opt("string", infisical.DEFAULT_ENVIRONMENT, "environment slug, for targets "
                                                                         "that name none"),
            "api_url": _opt("string", infisical.API_URL, "API root, /api included"),
            "verify": _VERIFY,
            "timeout": _TIMEOUT,
            "max_concurrency": _CONCURRENCY,
        },
        "auth": {
            "kinds": list(infisical.AUTH_KINDS),
            "config": {
                "token": _opt("string", None, "machine identity access token or service token"),
                "token_file": _opt("string", None, "file holding the token"),
                "client_id": _opt("string", None, "Universal Auth: the machine identity's client id"),
                "client_secret": _opt("string", None, "Universal Auth: its client secret"),
            },
        },
    },
}


def _options(options: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": name, **spec} for name, spec in options.items()]


def target_catalogue() -> list[dict[str, Any]]:
    """Every registered target kind: ``{type, provider, kind, description, config: [option]}``.

    An option is ``{name, type, default, description}``, as in the generator catalogue.
    """
    catalogue = []
    for kind in kinds():
        described = kind.describe()
        provider, _, name = kind.type.partition("/")
        catalogue.append({
            "type": kind.type, "provider": provider, "kind": name,
            "description": described.get("description", ""),
            "config": _options(described.get("config", {})),
        })
    return catalogue


def _offered(provider_kind: str) -> list[str]:
    return [kind.type for kind in kinds() if kind.type.partition("/")[0] == provider_kind]


def provider_catalogue() -> list[dict[str, Any]]:
    """Every provider kind: ``{kind, description, config, auth_kinds, auth_config, targets}``.

    ``config`` and ``auth_config`` are option lists; ``targets`` the target types it offers.
    """
    return [
        {"kind": name, "description": info["description"], "config": _options(info["config"]),
         "auth_kinds": list(info["auth"]["kinds"]), "auth_config": _options(info["auth"]["config"]),
         "targets": _offered(name)}
        for name, info in PROVIDER_KINDS.items()
    ]


def declared_providers(definition: Definition) -> list[dict[str, Any]]:
    """The definition's ``providers:`` entries, never a credential.

    ``{alias, kind, known, config, auth_kind, auth_keys, targets}``: ``config`` with values
    under credential-like keys replaced by ``***`` (and URL user info too); of the auth block
    only its kind and the names of its settings.
    """
    declared = []
    for alias, spec in definition.providers.items():
        auth = redacted_auth(spec.auth)
        auth_kind = spec.auth.get("kind") if isinstance(spec.auth, Mapping) else None
        options = auth.get("config")
        keys = sorted({k for k in auth if k not in ("kind", "config")}
                      | set(options if isinstance(options, dict) else ()))
        declared.append({
            "alias": alias,
            "kind": spec.kind,
            "known": spec.kind in PROVIDER_KINDS,
            "config": redacted_config(spec.config),
            "auth_kind": auth_kind if isinstance(auth_kind, str) else None,
            "auth_keys": keys,
            "targets": _offered(spec.kind),
        })
    return declared


def redacted_config(config: Any) -> dict[str, Any]:
    """A provider's ``config`` without credentials: values under credential-like keys and URLs'
    user info replaced by ``***``."""
    return {str(k): _redacted(k, v) for k, v in config.items()} if isinstance(config, Mapping) else {}


def redacted_auth(auth: Any) -> dict[str, Any]:
    """A provider's ``auth`` block reduced to its kind (a string) and the names of its settings:
    every other value, at the top and under ``config``, is ``***``."""
    if not isinstance(auth, Mapping):
        return {}
    shown: dict[str, Any] = {str(k): REDACTED for k in auth if k not in ("kind", "config")}
    if isinstance(auth.get("kind"), str):
        shown["kind"] = auth["kind"]
    elif "kind" in auth:
        shown["kind"] = REDACTED
    options = auth.get("config")
    if isinstance(options, Mapping):
        shown["config"] = {str(k): REDACTED for k in options}
    elif "config" in auth:
        shown["config"] = REDACTED
    return shown


def _redacted(key: Any, value: Any) -> Any:
    if isinstance(key, str) and _CREDENTIAL_KEY.search(key):
        return REDACTED
    if isinstance(value, Mapping):
        return {str(k): _redacted(k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(None, item) for item in value]
    if isinstance(value, str):
        return _without_userinfo(value)
    return value


def _without_userinfo(text: str) -> str:
    """``https://user:pass@host/`` -> ``https://***@host/``; other text unchanged."""
    if "@" not in text or "://" not in text:
        return text
    try:
        parts = urlsplit(text)
    except ValueError:
        return REDACTED
    if not parts.netloc or "@" not in parts.netloc:
        return text
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{REDACTED}@{host}"))
