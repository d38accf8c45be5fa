"""``kubernetes/kubernetes_secret``: secrets as data keys of a Kubernetes core/v1 Secret.

Every placement in one (provider, namespace, secret_name) is written by one merge patch that
sets only those data keys (labels and annotations merge too), or one create when the Secret
does not exist, so a Secret's other keys are never touched.

Target id: ``<provider>/kubernetes_secret/<namespace>/<secret_name>/<data_key>``. The id is
computed from the target's config alone, so when ``data_key`` (or ``key``) is not set it ends
at ``<secret_name>``: the data key is then the secret's (or template field's) own name, which
the lockfile entry holding the id already names.

Provider settings: ``host`` (``server``) with ``token`` or ``token_file``, ``verify``
(default true) and ``ca_cert``; else ``kubeconfig`` (``config_file``, else KUBECONFIG, else
~/.kube/config) and ``context``; else the in-cluster service account. ``timeout`` (default 5 s),
``max_concurrency`` (default 8). Answers 429 and 503 are retried with backoff, and no redirect is
followed (``rest.retry_policy``, the policy of every HTTP store).

The server's own credentials (KUBECONFIG, ~/.kube/config, the in-cluster service account) go only
to the clusters they name, never to a ``host`` the definition gives (which sends its own token).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.kubeconfig_files import checked_kubeconfig
from secretsapi.service.targets.providers import (
    CONCURRENCY,
    TIMEOUT,
    Provider,
    checked_provider,
    named_path,
    provider_of,
)
from secretsapi.service.targets.remote import (
    ClientCache,
    checked_group,
    collect,
    load_sdk,
    sdk_errors,
    sdk_failure,
    status_failure,
)
from secretsapi.service.targets.rest import redirected, retry_policy
from secretsapi.service.targets.schema import AuthKind, KindSchema, ProviderSchema, Setting
from secretsapi.service.util.hashing import sha256_text

DEFAULT_NAMESPACE = "default"
KUBERNETES = ProviderSchema(
    "kubernetes", "Kubernetes",
    "A Kubernetes cluster through the kubernetes client: host and token, else a kubeconfig (KUBECONFIG, "
    "~/.kube/config), else the in-cluster service account.",
    config={
        "host": Setting("string", "API server URL, used with token or token_file"),
        "kubeconfig": Setting("string", "kubeconfig path (relative to the definition folder)"),
        "context": Setting("string", "kubeconfig context; its current context by default"),
        "verify": Setting("boolean", "verify the API server's TLS certificate (with host)", True),
        "ca_cert": Setting("string", "CA bundle path for the API server (with host)"),
        "timeout": TIMEOUT,
        "max_concurrency": CONCURRENCY,
    },
    auth_kinds=tuple(AuthKind(name) for name in ("token", "kubeconfig", "in_cluster", "ambient", "env")),
    auth_config={
        "token": Setting("string", "bearer token (with host)"),
        "token_file": Setting("string", "file holding the bearer token"),
    },
)
PROVIDERS = (KUBERNETES,)

# The generated ApiClient keeps per-call state on itself (last_response): one per thread.
_clients = ClientCache(64, per_thread=True)


def _namespace(target: TargetSpec) -> str:
    return str(target.config.get("namespace") or DEFAULT_NAMESPACE)


def _name(target: TargetSpec) -> str:
    return str(target.config.get("secret_name"))


def _data_key(placement: Placement) -> str:
    config = placement.target.config
    return str(config.get("data_key") or config.get("key") or placement.key)


class KubernetesSecretKind(Kind):
    schema = KindSchema(
        "kubernetes/kubernetes_secret",
        "A data key of a Kubernetes Secret (type Opaque when created); other data keys, labels and "
        "annotations of the Secret are kept.",
        {
            "secret_name": Setting("string", "name of the Secret", required=True),
            "namespace": Setting("string", "namespace of the Secret", DEFAULT_NAMESPACE),
            "data_key": Setting("string", "key in the Secret's data; the secret (or template field) name by default"),
            "labels": Setting("object", "labels set on the Secret (merged)", items="string"),
            "annotations": Setting("object", "annotations set on the Secret (merged)", items="string"),
        },
        target_id="`<alias>/kubernetes_secret/<namespace>/<secret_name>/<data_key>`",
        example={'secret_name': 'app-secrets'}
    )

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        provider = provider_of(target, ctx)
        return not provider.text("host", "server") and not provider.text("kubeconfig", "config_file")

    def target_id(self, target: TargetSpec, ctx: TargetContext) -> str:
        return f"{target.provider}/{target.kind}/{self.location(target, ctx)}"

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        key = target.config.get("data_key") or target.config.get("key")
        return f"{_namespace(target)}/{_name(target)}" + (f"/{key}" if key else "")

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, target.provider, _namespace(target), _name(target))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        if not items:
            return {}
        target = items[0][0].target
        namespace, name = _namespace(target), _name(target)
        where = checked_group(self, [p.target for p, _ in items], f"{namespace}/{name}", ctx)
        values = collect(items, _data_key, where)
        metadata = {field: self._merged(items, field, where) for field in ("labels", "annotations")}
        data = {key: base64.b64encode(value.encode("utf-8")).decode("ascii") for key, value in values.items()}
        k8s = load_sdk("kubernetes.client", "kubernetes", self.type)
        api, timeout = self._api(target, ctx)
        patch = {"metadata": {k: v for k, v in metadata.items() if v}, "data": data}
        with sdk_errors(_error, where, "write"):
            try:
                self._call(api.patch_namespaced_secret, name, namespace, patch, timeout=timeout)
            except Exception as exc:
                if getattr(exc, "status", None) != 404:
                    raise
                body = k8s.V1Secret(
                    api_version="v1", kind="Secret", type="Opaque", data=data,
                    metadata=k8s.V1ObjectMeta(name=name, namespace=namespace, **{
                        k: dict(v) for k, v in metadata.items() if v}),
                )
                try:
                    self._call(api.create_namespaced_secret, namespace, body, timeout=timeout)
                except Exception as created:
                    if getattr(created, "status", None) != 409:  # created meanwhile: patch it
                        raise
                    self._call(api.patch_namespaced_secret, name, namespace, patch, timeout=timeout)
        return {p.key: sha256_text(values[_data_key(p)]) for p, _ in items}

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        target = items[0].target
        namespace, name = _namespace(target), _name(target)
        where = checked_group(self, [p.target for p in items], f"{namespace}/{name}", ctx)
        api, timeout = self._api(target, ctx)
        try:
            secret = self._call(api.read_namespaced_secret, name, namespace, timeout=timeout)
        except Exception as exc:
            if getattr(exc, "status", None) == 404:
                return {p.key: ReadBack(False, None, f"{namespace}/{name}/{_data_key(p)}") for p in items}
            raise _error(exc, where, "read") from None
        data = secret.get("data") if isinstance(secret, Mapping) else None
        data = data if isinstance(data, Mapping) else {}
        backs = {}
        for placement in items:
            key = _data_key(placement)
            location = f"{namespace}/{name}/{key}"
            encoded = data.get(key)
            if not isinstance(encoded, str):
                backs[placement.key] = ReadBack(False, None, location)
                continue
            try:
                raw = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                raise TargetError(f"{where}: data key '{key}' is not valid base64") from None
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:  # binary data: compare its bytes' hash, never reuse it
                backs[placement.key] = ReadBack(True, hashlib.sha256(raw).hexdigest(), location)
                continue
            backs[placement.key] = ReadBack(True, sha256_text(text), location, text)
        return backs

    @staticmethod
    def _merged(items: Sequence[tuple[Placement, str]], field: str, where: str) -> dict[str, str]:
        merged: dict[str, str] = {}
        for placement, _ in items:
            for key, value in (placement.target.config.get(field) or {}).items():
                if merged.get(key, value) != value:
                    raise TargetError(f"{where}: placements disagree on {field[:-1]} '{key}'")
                merged[key] = value
        return merged

    @staticmethod
    def _call(method: Any, *args: Any, timeout: float) -> Any:
        """Call the API raw (no model decoding, which differs between client versions)."""
        response = method(*args, _request_timeout=timeout, _preload_content=False)
        try:
            body = response.data
        finally:
            response.release_conn()
        return json.loads(body) if body else None

    # -- client --------------------------------------------------------------------------

    def _api(self, target: TargetSpec, ctx: TargetContext) -> tuple[Any, float]:
        k8s = load_sdk("kubernetes.client", "kubernetes", self.type)
        provider = checked_provider(target, ctx, KUBERNETES)
        timeout = provider.timeout
        host = provider.text("host", "server")
        if host:
            settings = self._direct(provider, ctx)
            return _clients.get(("host", host, settings, timeout),
                                lambda: self._direct_client(k8s, host, settings)), timeout
        config = load_sdk("kubernetes.config", "kubernetes", self.type)
        given = provider.text("kubeconfig", "config_file")
        # What the definition names is confined, and what it lists (kubeconfig_files).
        path = (checked_kubeconfig(given, ctx, provider.alias) if given
                else os.environ.get("KUBECONFIG") or "~/.kube/config")
        files = [Path(os.path.expanduser(p)) for p in path.split(os.pathsep) if p]
        context = provider.text("context")
        if context and not given:  # a context of the server's kubeconfig: one of the operator's identities
            ctx.egress.check_kube_context(context, provider.alias)
        if any(f.is_file() for f in files):
            stamps = [(str(f), f.stat().st_mtime_ns) for f in files if f.is_file()]
            return _clients.get(("kubeconfig", stamps, context, timeout), lambda: self._loaded_client(
                k8s, lambda cfg: config.load_kube_config(
                    config_file=path, context=context, client_configuration=cfg, persist_config=False),
                provider.alias)), timeout
        if given:
            raise TargetError(f"provider '{provider.alias}': kubeconfig '{given}' not found")
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            return _clients.get(("in-cluster", timeout), lambda: self._loaded_client(
                k8s, lambda cfg: config.load_incluster_config(client_configuration=cfg),
                provider.alias)), timeout
        raise TargetError(f"provider '{provider.alias}': no Kubernetes configuration (set host and "
                          "token, or kubeconfig, in the provider; or KUBECONFIG)")

    @staticmethod
    def _direct(provider: Provider, ctx: TargetContext) -> dict[str, Any]:
        token = provider.token(ctx)
        verify = provider.settings.get("verify", True)
        if not isinstance(verify, bool):
            raise TargetError(f"provider '{provider.alias}': verify must be true or false")
        ca_cert = provider.text("ca_cert", "certificate_authority")
        ca_path = named_path(ca_cert, ctx, "ca_cert", provider.alias) if ca_cert else None
        return {"token": token, "verify": verify, "ca_cert": ca_path}

    @staticmethod
    def _direct_client(k8s: Any, host: str, settings: Mapping[str, Any]) -> Any:
        cfg = k8s.Configuration(host=host)
        if settings["token"]:
            cfg.api_key = {"BearerToken": settings["token"]}
            cfg.api_key_prefix = {"BearerToken": "Bearer"}
        cfg.verify_ssl = settings["verify"]
        if settings["ca_cert"]:
            cfg.ssl_ca_cert = settings["ca_cert"]
        cfg.retries = retry_policy()
        return k8s.CoreV1Api(k8s.ApiClient(cfg))

    @staticmethod
    def _loaded_client(k8s: Any, load: Any, alias: str) -> Any:
        cfg = k8s.Configuration()
        try:
            load(cfg)
        except Exception as exc:  # its text may quote the file; the class is enough
            raise TargetError(f"provider '{alias}': Kubernetes configuration cannot be loaded "
                              f"({type(exc).__name__})") from None
        cfg.retries = retry_policy()
        return k8s.CoreV1Api(k8s.ApiClient(cfg))


def _error(exc: BaseException, where: str, operation: str) -> TargetError:
    """The HTTP status class, never the response body (a Status can quote the request)."""
    status = getattr(exc, "status", None)
    if isinstance(status, int) and 300 <= status < 400:
        return redirected(where, operation, status)
    if isinstance(status, int) and status:
        return status_failure(status, where, operation, missing="no such namespace or resource")
    return sdk_failure(exc, where, operation)


KINDS = (KubernetesSecretKind(),)
