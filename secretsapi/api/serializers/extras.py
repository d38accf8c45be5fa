"""Config render, secret value read and agent sync."""

from __future__ import annotations

from rest_framework import serializers

from secretsapi.api.serializers.operations import (
    OperationErrorSerializer,
    SyncResultSerializer,
    VarFilesField,
)
from secretsapi.api.serializers.secrets import SecretStatusSerializer


class ConfigRenderRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    var_files = VarFilesField()
    variables = serializers.DictField(
        required=False, default=dict, help_text="Variables merged last, over the definition's and the var files'."
    )


class ConfigRenderResultSerializer(serializers.Serializer):  # type: ignore[type-arg]
    config = serializers.DictField(
        help_text="The definition with every variable applied; static secret values and anything "
        "taken from the server's environment are `***`."
    )
    variables_used = serializers.ListField(child=serializers.CharField(), help_text="Variables referenced.")
    environment_used = serializers.ListField(
        child=serializers.CharField(), help_text="Names read from the server's environment (values redacted)."
    )
    var_files = serializers.ListField(child=serializers.CharField())


class SecretDefinitionSerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField()
    kind = serializers.CharField()
    rotation_period = serializers.CharField(allow_null=True)
    targets = serializers.ListField(child=serializers.CharField())
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
    messages = serializers.ListField(child=serializers.CharField())


class SecretOutcomeSerializer(serializers.Serializer):  # type: ignore[type-arg]
    secret = serializers.CharField()
    outcome = serializers.ChoiceField(choices=["generated", "skipped", "partial", "failed"])
    errors = OperationErrorSerializer(many=True)


class AgentSyncResultSerializer(SyncResultSerializer):
    status = serializers.ChoiceField(
        choices=["complete", "partial", "failed", "nothing_to_do"],
        help_text="complete: all stored; partial: some target failed; failed: nothing stored; "
        "nothing_to_do: every secret already existed.",
    )
    outcomes = SecretOutcomeSerializer(many=True)
