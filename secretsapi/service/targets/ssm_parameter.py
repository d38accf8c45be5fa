"""``aws/ssm_parameter``: a secret as one AWS Systems Manager Parameter Store parameter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from secretsapi.service.definition.model import Placement
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.aws import NamedEntryKind, aws_client, client_error, error_code
from secretsapi.service.targets.base import ReadBack, TargetContext
from secretsapi.service.targets.remote import checked_group
from secretsapi.service.targets.schema import KindSchema, Setting
from secretsapi.service.util.hashing import sha256_text

TYPES = ("SecureString", "String", "StringList")
TIERS = ("Standard", "Advanced", "Intelligent-Tiering")


class SsmParameterKind(NamedEntryKind):
    schema = KindSchema(
        "aws/ssm_parameter",
        "An AWS SSM Parameter Store parameter; each write is a new parameter version. Read back with "
        "decryption for drift.",
        {
            "name": Setting("string", "parameter name, e.g. /app/prod/db_password", required=True),
            "type": Setting("string", "SecureString | String | StringList", "SecureString", choices=TYPES),
            "tier": Setting("string", "Standard | Advanced | Intelligent-Tiering", "Standard", choices=TIERS),
            "description": Setting("string", "parameter description"),
            "kms_key_id": Setting("string", "KMS key for SecureString; the account's default key when unset"),
            "overwrite": Setting("boolean", "replace an existing parameter; false: fail if it exists", True),
        },
        target_id="`<alias>/ssm_parameter/<name>`",
        example={'name': '/app/db_password'}
    )
    service = "ssm"
    agreed = ("type", "tier", "description", "kms_key_id", "overwrite")

    def store(self, client: Any, config: Mapping[str, Any], value: str, where: str) -> None:
        request: dict[str, Any] = {
            "Name": config["name"], "Value": value, "Type": config.get("type") or "SecureString",
            "Tier": config.get("tier") or "Standard", "Overwrite": config.get("overwrite", True),
        }
        if config.get("description"):
            request["Description"] = config["description"]
        if config.get("kms_key_id") and request["Type"] == "SecureString":
            request["KeyId"] = config["kms_key_id"]
        try:
            client.put_parameter(**request)
        except Exception as exc:
            if error_code(exc) == "ParameterAlreadyExists":
                raise TargetError(f"{where}: the parameter exists and config.overwrite is false") from None
            raise client_error(exc, where, "put_parameter") from None

    batch = 10  # GetParameters takes at most ten names

    def read_many(self, groups: Sequence[Sequence[Placement]],
                  ctx: TargetContext) -> list[dict[str, ReadBack] | TargetError]:
        """Read up to ``batch`` groups of one provider with one GetParameters call.

        Drift reads every parameter: ten per request is a tenth of the round trips. A name the
        answer does not account for (an ARN or a version selector, which GetParameters answers
        under another name) is read on its own.
        """
        results: list[dict[str, ReadBack] | TargetError] = []
        names: dict[str, int] = {}
        for index, items in enumerate(groups):
            target = items[0].target
            try:
                checked_group(self, [target], self.location(target, ctx), ctx)
                names[str(target.config["name"])] = index
                results.append({})
            except TargetError as exc:
                results.append(exc)
        if not names:
            return results
        first = groups[next(iter(names.values()))][0].target
        try:
            client = aws_client(self.service, first, ctx, self.type)
            answer = client.get_parameters(Names=list(names), WithDecryption=True)
        except Exception as exc:
            for name, index in names.items():
                results[index] = client_error(exc, f"{first.provider}/{first.kind}/{name}", "get_parameters")
            return results
        found = {p.get("Name"): p.get("Value") for p in answer.get("Parameters", [])}
        absent = set(answer.get("InvalidParameters", []))
        for name, index in names.items():
            stored = found.get(name)
            if isinstance(stored, str):
                results[index] = {p.key: ReadBack(True, sha256_text(stored), name, stored) for p in groups[index]}
            elif name in absent:
                results[index] = {p.key: ReadBack(False, None, name) for p in groups[index]}
            else:
                try:
                    results[index] = self.read(groups[index], ctx)
                except TargetError as exc:
                    results[index] = exc
        return results

    def fetch(self, client: Any, name: str, where: str) -> tuple[str, str | None] | None:
        try:
            stored = client.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"]
        except Exception as exc:
            if error_code(exc) == "ParameterNotFound":
                return None
            raise client_error(exc, where, "get_parameter") from None
        return sha256_text(stored), stored


KINDS = (SsmParameterKind(),)
