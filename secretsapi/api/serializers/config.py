"""POST /config/validate and POST /config/render."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from secretsapi.api.errors import BadRequest
from secretsapi.api.serializers.operations import VarFilesField, environment_field
from secretsapi.api.serializers.strict import JobRequestSerializer, StrictDictField


class DefinitionField(StrictDictField):
    """The spec answers 400 (not 422) for a `config` that is missing or not a JSON object."""

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if not isinstance(data, dict):
            raise BadRequest("`config` must be a JSON object holding the definition.")
        empty: tuple[bool, Any] = super().validate_empty_values(data)
        return empty


class ConfigValidateRequestSerializer(JobRequestSerializer):
    config = DefinitionField(help_text="The definition as a JSON object.")


class ValidationResultSerializer(serializers.Serializer):  # type: ignore[type-arg]
    valid = serializers.BooleanField(help_text="No errors; warnings do not make it invalid.")
    errors = serializers.ListField(child=serializers.CharField())  # type: ignore[assignment]  # the API's field name shadows Serializer.errors
    warnings = serializers.ListField(child=serializers.CharField(), help_text="Works, but deserves a look.")


class ConfigRenderRequestSerializer(JobRequestSerializer):
    var_files = VarFilesField()
    environment = environment_field()
    variables = StrictDictField(
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
