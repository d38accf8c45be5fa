"""POST /config/validate and POST /config/render."""

from __future__ import annotations

from rest_framework import serializers

from secretsapi.api.serializers.operations import VarFilesField


class ConfigValidateRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    # Typed as an object for the schema; the view answers 400 (not 422) for anything else.
    config = serializers.DictField(help_text="The definition as a JSON object.")


class ValidationResultSerializer(serializers.Serializer):  # type: ignore[type-arg]
    valid = serializers.BooleanField(help_text="No errors; warnings do not make it invalid.")
    errors = serializers.ListField(child=serializers.CharField())  # type: ignore[assignment]  # the API's field name shadows Serializer.errors
    warnings = serializers.ListField(child=serializers.CharField(), help_text="Works, but deserves a look.")


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
