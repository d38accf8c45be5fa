"""GET /secrets, GET /secrets/{name}/status and GET /secrets/{name} (the value read)."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from secretsapi.api.serializers.operations import ENVIRONMENT_HELP, VAR_FILES_HELP, VarFilesField
from secretsapi.api.serializers.strict import StrictCharField, StrictQuerySerializer

# A query string is part of the request line, which the server refuses past 4,094 bytes (414),
# so the GET parameters are bounded for every request the schema allows to fit, with a secret
# name of up to 255 plain characters: eight var files of at most 100 printable ASCII characters
# (at most 3 bytes each once percent-encoded) and an environment of at most 64 characters (at
# most 12 bytes each). A query has no null: an absent environment is the default lane. POST
# bodies keep their own bounds (64 var files of 4,096 characters, any text).
QUERY_VAR_FILES = 8
QUERY_VAR_FILE_LENGTH = 100
QUERY_ENVIRONMENT_LENGTH = 64
# Printable ASCII (space included), and not only spaces.
QUERY_VAR_FILE_PATTERN = r"^[ -~]*[!-~][ -~]*$"


def _query_environment() -> StrictCharField:
    return StrictCharField(max_length=QUERY_ENVIRONMENT_LENGTH, required=False, help_text=(
        f"{ENVIRONMENT_HELP.replace('Null: ', 'Absent: ')} At most {QUERY_ENVIRONMENT_LENGTH} characters."))


class VarFilesQuerySerializer(StrictQuerySerializer):
    """The GET endpoints take the operations' ``var_files`` as a repeated query parameter."""

    var_files = VarFilesField(
        child=StrictCharField(max_length=QUERY_VAR_FILE_LENGTH, validators=[RegexValidator(
            QUERY_VAR_FILE_PATTERN, message="must name a file in printable ASCII characters, not only spaces.")]),
        max_length=QUERY_VAR_FILES,
        help_text=f"{VAR_FILES_HELP} Repeat it for several: `?var_files=a.yml&var_files=b.yml`; at most "
        f"{QUERY_VAR_FILES}, each at most {QUERY_VAR_FILE_LENGTH} printable ASCII characters, so that the "
        "request line fits (the POST operations take more).")
    environment = _query_environment()


class EnvironmentQuerySerializer(StrictQuerySerializer):
    """The discovery reads that look at the definition take the environment lane alone."""

    environment = _query_environment()


class SecretEntrySerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField()
    kind = serializers.CharField(help_text="Generator kind, or `templates.<name>`.")
    rotation_period = serializers.CharField(allow_null=True, help_text="`<N>d|w|m|y`, or null.")
    targets = serializers.ListField(
        child=serializers.CharField(),
        help_text="`<provider>/<kind>` of each target the secret declares, in definition order, repeats "
        "included (SecretZero's listing): two files give `local/file` twice; a template secret "
        "lists its own `targets`, not the template's.",
    )

    def to_representation(self, instance: Any) -> dict[str, Any]:
        # The fields above are the schema; a SecretSummary's values already have their types.
        # DRF's field walk made 20,000 entries ~40 MB of transient objects in a worker.
        return {"name": instance.name, "kind": instance.kind, "rotation_period": instance.rotation_period,
                "targets": list(instance.targets)}


class SecretListSerializer(serializers.Serializer):  # type: ignore[type-arg]
    secrets = SecretEntrySerializer(many=True)
    count = serializers.IntegerField(help_text="Total number of secrets.")


class SecretStatusSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """When ``exists`` is false the body carries only ``name`` and ``exists``."""

    name = serializers.CharField()
    exists = serializers.BooleanField(help_text="Recorded in the lockfile (generated).")
    created_at = serializers.CharField(required=False, allow_null=True)
    updated_at = serializers.CharField(required=False, allow_null=True)
    last_rotated = serializers.CharField(required=False, allow_null=True)
    rotation_count = serializers.IntegerField(required=False)
    targets = serializers.ListField(child=serializers.CharField(), required=False, help_text="Target ids.")
    last_change = serializers.ChoiceField(
        choices=["generated", "rotated", "regenerated", "imported", "changed"], required=False,
        help_text="How the value last changed (at `updated_at`): `generated` by a sync, `rotated`, `regenerated` "
        "by a forced sync, `imported` from its targets, or `changed` by a tool that does not say how.",
    )

    def to_representation(self, instance: Any) -> dict[str, Any]:
        # The fields above are the schema; the values (a SecretStatus) already have their
        # types, and DRF's generic field walk was ~15% of this hot endpoint's time.
        if not instance.exists:
            return {"name": instance.name, "exists": False}
        return {
            "name": instance.name,
            "exists": True,
            "created_at": instance.created_at,
            "updated_at": instance.updated_at,
            "last_rotated": instance.last_rotated,
            "rotation_count": instance.rotation_count,
            "targets": list(instance.targets),
            "last_change": instance.last_change,
        }


class SecretStatusListSerializer(serializers.Serializer):  # type: ignore[type-arg]
    secrets = SecretStatusSerializer(many=True, help_text="Every declared secret's status, in definition order.")
    count = serializers.IntegerField(help_text="How many secrets are listed.")


class SecretDefinitionSerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField()
    kind = serializers.CharField()
    rotation_period = serializers.CharField(allow_null=True)
    targets = serializers.ListField(
        child=serializers.CharField(), help_text="`<provider>/<kind>` per declared target, as in `GET /secrets`."
    )
    one_time = serializers.BooleanField()
    description = serializers.CharField(allow_null=True)


class SecretValueSerializer(serializers.Serializer):  # type: ignore[type-arg]
    definition = SecretDefinitionSerializer()
    status = SecretStatusSerializer()
    value = serializers.JSONField(
        allow_null=True, help_text="The value (an object of field values for a template secret); null if unreadable."
    )
    verified = serializers.BooleanField(help_text="Every value read matches the hash in the lockfile.")
    sources = serializers.DictField(child=serializers.CharField(allow_null=True), help_text="Target id read, per unit.")
    messages = serializers.ListField(child=serializers.CharField(), help_text="What each read found.")
