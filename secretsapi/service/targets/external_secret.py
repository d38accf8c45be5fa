"""``kubernetes/external_secret``: the External Secrets Operator manifest SecretZero writes.

The manifest names where the operator fetches the value (``backend_key`` in the
``secret_store_ref`` store); the value itself is never written. The file is SecretZero's YAML,
key for key, written to ``output_path`` (confined like ``local/file``, atomically, mode 0600 when
new, never through a symbolic link). The recorded hash is the manifest's: drift finds an edited
or missing manifest, and a repair writes it again. Several secrets naming one ``output_path``
share the manifest, one ``data`` entry each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.ids import secretzero_target_id
from secretsapi.service.targets.output_file import OutputFileKind, output_path
from secretsapi.service.targets.schema import KindSchema, Setting

_TEXT_OPTIONS = ("namespace", "secret_name", "external_secret_name", "secret_store_ref",
                 "backend_type", "backend_key", "refresh_interval")
# Options the manifest takes as they are; SecretZero's defaults.
_DEFAULTS = {"namespace": "default", "secret_store_ref": "default", "backend_type": "aws",
             "refresh_interval": "1h"}


class ExternalSecretKind(OutputFileKind):
    schema = KindSchema(
        "kubernetes/external_secret",
        "An External Secrets Operator ExternalSecret manifest (YAML, as SecretZero writes it) in a local "
        "file: the operator copies backend_key from the secret store into a Kubernetes Secret. The value "
        "is never written; the recorded hash is the manifest's.",
        {
            "output_path": Setting("path", "manifest file, relative to the definition folder, inside "
                                           "SERVICE_TARGET_ROOTS", required=True),
            "secret_name": Setting("string", "the Kubernetes Secret the operator creates", required=True),
            "external_secret_name": Setting("string", "the ExternalSecret's name; secret_name by default"),
            "namespace": Setting("string", "namespace of both", "default"),
            "secret_store_ref": Setting("string", "the SecretStore to read from", "default"),
            "backend_type": Setting("string", "accepted for SecretZero, which does not write it either", "aws"),
            "backend_key": Setting("string", "key in the store; the secret's name by default"),
            "refresh_interval": Setting("string", "how often the operator refreshes", "1h"),
            "labels": Setting("object", "metadata labels", {}, items="string"),
            "annotations": Setting("object", "metadata annotations", {}, items="string"),
        },
        target_id="SecretZero's: `kubernetes/external_secret/`",
        example={'output_path': 'manifests/db.yaml', 'secret_name': 'db'}
    )

    def target_id(self, target: TargetSpec, ctx: TargetContext) -> str:
        """SecretZero's: its identifier keys (``name``, ``path``...) are not this kind's options,
        so usually ``kubernetes/external_secret/``."""
        return secretzero_target_id(target)

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        if not items:
            return {}
        placements = [placement for placement, _ in items]
        text = self._manifest(placements)
        return self.store(placements, text, output_path(placements[0].target, ctx), ctx)

    def _manifest(self, placements: Sequence[Placement]) -> str:
        """SecretZero's ``ExternalSecretTarget.store`` document: the first placement's settings,
        one ``data`` entry per placement."""
        config = {**_DEFAULTS, **{k: v for k, v in placements[0].target.config.items() if v is not None}}
        for placement in placements[1:]:
            other = {**_DEFAULTS, **{k: v for k, v in placement.target.config.items() if v is not None}}
            differing = [k for k in (*_TEXT_OPTIONS, "labels", "annotations")
                         if k not in ("backend_key",) and other.get(k) != config.get(k)]
            if differing:
                raise TargetError(f"{placement.target.config.get('output_path')}: secrets sharing this "
                                  f"manifest disagree on {', '.join(differing)}")
        metadata: dict[str, Any] = {
            "name": config.get("external_secret_name") or config["secret_name"],
            "namespace": config["namespace"],
        }
        manifest: dict[str, Any] = {
            "apiVersion": "external-secrets.io/v1beta1",
            "kind": "ExternalSecret",
            "metadata": metadata,
            "spec": {
                "refreshInterval": config["refresh_interval"],
                "secretStoreRef": {"name": config["secret_store_ref"], "kind": "SecretStore"},
                "target": {"name": config["secret_name"], "creationPolicy": "Owner"},
                "data": [{"secretKey": p.key,
                          "remoteRef": {"key": p.target.config.get("backend_key") or p.key}}
                         for p in placements],
            },
        }
        if config.get("labels"):
            metadata["labels"] = dict(config["labels"])
        if config.get("annotations"):
            metadata["annotations"] = dict(config["annotations"])
        return str(yaml.dump(manifest, default_flow_style=False, sort_keys=False))


KINDS = (ExternalSecretKind(),)
