"""Sync, agent sync, rotation, policy and drift: requests and results."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from secretsapi.api.serializers.strict import (
    JobRequestSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictListField,
)


def secret_name_field(help_text: str) -> StrictCharField:
    """An optional secret name (null: every secret)."""
    return StrictCharField(max_length=255, allow_null=True, required=False, default=None, help_text=help_text)


VAR_FILES_HELP = (
    "Variable files (YAML mappings) merged over `variables`, later files win; paths relative to the "
    "definition file's folder, which they may not leave. Give the ones the secrets were synced with."
)


ENVIRONMENT_HELP = (
    "The environment lane, a key of the definition's `environments.profiles` (SecretZero's `-e`): its var "
    "files come before `var_files`, and its lockfile and `target_profile` apply. Null: `environments.default`. "
    "An environment the definition does not declare is 404, naming the known ones."
)


def environment_field(**kwargs: Any) -> StrictCharField:
    """An optional environment name (null: the definition's default lane)."""
    options: dict[str, Any] = {"max_length": 255, "allow_null": True, "required": False, "default": None,
                               "help_text": ENVIRONMENT_HELP}
    return StrictCharField(**{**options, **kwargs})


# The engine refuses a blank path (400) and every text field a NUL (422): the schema says both, so
# the validator (which drf-spectacular writes as the item's pattern) refuses them first.
VAR_FILE_PATTERN = r"^[^\x00]*[^\x00\s][^\x00]*$"


def var_file_field() -> StrictCharField:
    return StrictCharField(max_length=4096, validators=[
        RegexValidator(VAR_FILE_PATTERN, message="must name a file: not blank, and without NUL characters."),
    ])


class VarFilesField(StrictListField):
    def __init__(self, **kwargs: Any) -> None:
        options: dict[str, Any] = {"child": var_file_field(), "max_length": 64,
                                   "required": False, "default": list, "help_text": VAR_FILES_HELP}
        super().__init__(**{**options, **kwargs})


class SyncRequestSerializer(JobRequestSerializer):
    dry_run = StrictBooleanField(default=False, help_text="Preview without applying changes.")
    force = StrictBooleanField(default=False, help_text="Regenerate existing secrets.")
    secret_name = secret_name_field("Sync only this secret.")
    var_files = VarFilesField()
    environment = environment_field()
    repair = StrictBooleanField(
        default=False, help_text="Also put each existing secret's recorded value back into targets that are "
        "misencoded or hold another value, copied from a target that holds it (no rotation). Every sync "
        "writes it to missing, new and never-written targets; without repair a changed target is an error.",
    )
    refresh = StrictBooleanField(
        default=False, help_text="First drop recorded target ids the definition no longer names (a target "
        "renamed or removed), as SecretZero's `--refresh` does.",
    )


class AgentSyncRequestSerializer(SyncRequestSerializer):
    repair = StrictBooleanField(
        default=True, help_text="Put recorded values back into targets that hold another value too "
        "(default: true; see /sync).",
    )


class OperationErrorSerializer(serializers.Serializer):  # type: ignore[type-arg]
    secret = serializers.CharField(help_text="The secret that failed.")
    target = serializers.CharField(allow_null=True, help_text="Target id, or null for a failure before any target.")
    message = serializers.CharField(help_text="What went wrong (never a value).")


def _target_map(help_text: str) -> serializers.DictField:
    return serializers.DictField(child=serializers.ListField(child=serializers.CharField()), help_text=help_text)


WRITTEN_HELP = "Every secret written: lockfile key -> the target ids that took its new value (never a value)."
WRITTEN_TARGETS_HELP = ("Secrets a target failed for: lockfile key -> the targets that do hold the new value "
                        "(the others hold the previous one, or nothing).")


class SyncResultSerializer(serializers.Serializer):  # type: ignore[type-arg]
    secrets_generated = serializers.ListField(
        child=serializers.CharField(), help_text="Generated (in a dry run: would be generated)."
    )
    secrets_skipped = serializers.ListField(
        child=serializers.CharField(), help_text="Already generated: kept (use `force` to regenerate)."
    )
    secrets_failed = serializers.ListField(child=serializers.CharField(), help_text="New value stored nowhere.")
    secrets_repaired = serializers.ListField(
        child=serializers.CharField(),
        help_text="Existing secrets whose broken targets got their recorded value back (in a dry run: would).",
    )
    errors = OperationErrorSerializer(many=True, help_text="Every failure, including partial ones.")  # type: ignore[assignment]  # the API's field name shadows Serializer.errors
    message = serializers.CharField(help_text="One sentence with the counts.")
    sources = serializers.DictField(
        child=serializers.CharField(),
        help_text="Secrets whose value was imported, not generated: name -> source kind (env, file, secret_ref, "
        "provider_read; env also for the environment override). Never the value.",
    )
    refreshed = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="With `refresh`: lockfile key -> the recorded target ids dropped.",
    )
    written = _target_map(WRITTEN_HELP)
    written_targets = _target_map(WRITTEN_TARGETS_HELP)


class RotationCheckRequestSerializer(JobRequestSerializer):
    secret_name = secret_name_field("Check only this secret.")
    dry_run = StrictBooleanField(default=True, help_text="Accepted and ignored: a check changes nothing.")
    var_files = VarFilesField()
    environment = environment_field()


class RotationStatusSerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField()
    should_rotate = serializers.BooleanField(help_text="Due soon or overdue: a rotation without `force` rotates it.")
    status = serializers.CharField(
        help_text="`up to date`, `due in N days` or `overdue by N days`; followed by `; rotating would move "
        "it: ...` when the lockfile records targets that the definition rendered with these `var_files` "
        "does not have (a rotation then fails the secret)."
    )
    due_at = serializers.CharField(allow_null=True, help_text="When rotation falls due (ISO 8601).")


class RotationCheckResultSerializer(serializers.Serializer):  # type: ignore[type-arg]
    secrets_checked = serializers.IntegerField(help_text="Secrets checked: every secret, or the one named.")
    secrets_due = serializers.ListField(
        child=serializers.CharField(), help_text="Falling due within the warning window."
    )
    secrets_overdue = serializers.ListField(child=serializers.CharField(), help_text="Past their due date.")
    results = RotationStatusSerializer(many=True)


class RotationExecuteRequestSerializer(JobRequestSerializer):
    secret_name = secret_name_field("Rotate only this secret.")
    force = StrictBooleanField(default=False, help_text="Rotate even if not due.")
    var_files = VarFilesField()
    environment = environment_field()


class RotationExecuteResultSerializer(serializers.Serializer):  # type: ignore[type-arg]
    rotated = serializers.ListField(child=serializers.CharField(), help_text="Given a new value.")
    failed = serializers.ListField(child=serializers.CharField(), help_text="Not rotated; see `errors`.")
    errors = OperationErrorSerializer(many=True)  # type: ignore[assignment]  # the API's field name shadows Serializer.errors
    message = serializers.CharField(help_text="One sentence with the counts.")
    sources = serializers.DictField(
        child=serializers.CharField(),
        help_text="Secrets whose value was imported again, not generated: name -> source kind. Never the value.",
    )
    written = _target_map(WRITTEN_HELP)
    written_targets = _target_map(WRITTEN_TARGETS_HELP)


class PolicyCheckRequestSerializer(JobRequestSerializer):
    fail_on_warning = StrictBooleanField(
        default=False, help_text="Treat warnings as failures: `compliant` is false when there are any."
    )
    var_files = VarFilesField()
    environment = environment_field()


class PolicyItemSerializer(serializers.Serializer):  # type: ignore[type-arg]
    secret = serializers.CharField(help_text="Secret name (`*` for a summary of a whole policy).")
    policy = serializers.CharField()
    message = serializers.CharField()
    severity = serializers.ChoiceField(choices=["error", "warning", "info"])


class PolicyResultSerializer(serializers.Serializer):  # type: ignore[type-arg]
    compliant = serializers.BooleanField(
        help_text="No errors (and, with `fail_on_warning`, no warnings)."
    )
    errors = PolicyItemSerializer(many=True)  # type: ignore[assignment]  # the API's field name shadows Serializer.errors
    warnings = PolicyItemSerializer(many=True)
    info = PolicyItemSerializer(many=True)


class DriftCheckRequestSerializer(JobRequestSerializer):
    secret_name = secret_name_field("Check only this secret.")
    var_files = VarFilesField()
    environment = environment_field()


class DriftItemSerializer(serializers.Serializer):  # type: ignore[type-arg]
    secret = serializers.CharField()
    message = serializers.CharField()
    details = serializers.DictField(
        help_text="`reason` (not_generated, target_missing, value_changed, misencoded, untracked_target, "
        "corrupted_entry, definition_changed, target_unreadable, unverifiable, token_revoked, token_expired, "
        "token_missing, token_unchecked), `target`, `path`; `token_id` and `expires_at` for a token's state; "
        "`expected_hash` and `actual_hash` for a changed value; `store_updated_at`, `recorded_at` and "
        "`changed_after_record` for a write-only target (unverifiable)."
    )


class DriftResultSerializer(serializers.Serializer):  # type: ignore[type-arg]
    has_drift = serializers.BooleanField(help_text="Any finding at all, except unverifiable targets that the "
                                         "store did not write after the lockfile's time.")
    secrets_with_drift = serializers.ListField(child=serializers.CharField(),
                                               help_text="Secrets with a finding counted as drift.")
    details = DriftItemSerializer(many=True)


class SecretOutcomeSerializer(serializers.Serializer):  # type: ignore[type-arg]
    secret = serializers.CharField()
    outcome = serializers.ChoiceField(choices=["generated", "repaired", "skipped", "partial", "failed"])
    errors = OperationErrorSerializer(many=True)  # type: ignore[assignment]  # the API's field name shadows Serializer.errors


class AgentSyncResultSerializer(SyncResultSerializer):
    status = serializers.ChoiceField(
        choices=["complete", "partial", "failed", "nothing_to_do"],
        help_text="complete: all stored or repaired; partial: some target failed; failed: nothing stored; "
        "nothing_to_do: every secret already existed and every target held its value.",
    )
    outcomes = SecretOutcomeSerializer(many=True)
