"""GET /generators, /secret-types, /targets and /providers."""

from __future__ import annotations

from rest_framework import serializers


class OptionSerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField()
    type = serializers.CharField()
    default = serializers.JSONField(allow_null=True, required=False)
    description = serializers.CharField()


class GeneratorSerializer(serializers.Serializer):  # type: ignore[type-arg]
    kind = serializers.CharField()
    description = serializers.CharField()
    options = OptionSerializer(many=True)


class GeneratorListSerializer(serializers.Serializer):  # type: ignore[type-arg]
    generators = GeneratorSerializer(many=True)
    count = serializers.IntegerField()


class SecretTypeSerializer(GeneratorSerializer):
    template = serializers.BooleanField(help_text="A `templates.<name>` type from the definition.")
    fields = serializers.ListField(child=serializers.CharField(), help_text="A template's field names.")  # type: ignore[assignment]  # the API's field name shadows Serializer.fields


class SecretTypeListSerializer(serializers.Serializer):  # type: ignore[type-arg]
    secret_types = SecretTypeSerializer(many=True)
    count = serializers.IntegerField()


class TargetKindSerializer(serializers.Serializer):  # type: ignore[type-arg]
    type = serializers.CharField(help_text="`<provider>/<kind>`, e.g. `aws/ssm_parameter`.")
    description = serializers.CharField()
    config = OptionSerializer(many=True)
    schema = serializers.DictField(help_text="JSON Schema (2020-12) of a target's `config`.")


class TargetKindListSerializer(serializers.Serializer):  # type: ignore[type-arg]
    targets = TargetKindSerializer(many=True)
    count = serializers.IntegerField()


class ProviderKindSerializer(serializers.Serializer):  # type: ignore[type-arg]
    kind = serializers.CharField()
    description = serializers.CharField()
    config = OptionSerializer(many=True)
    auth_kinds = serializers.ListField(child=serializers.CharField(), help_text="Accepted `auth.kind` values.")
    auth_config = OptionSerializer(many=True, help_text="Settings under `auth.config`.")
    targets = serializers.ListField(child=serializers.CharField(), help_text="Target types it offers.")
    schema = serializers.DictField(help_text="JSON Schema (2020-12) of a `providers:` entry of this kind.")


class DeclaredProviderSerializer(serializers.Serializer):  # type: ignore[type-arg]
    alias = serializers.CharField()
    kind = serializers.CharField()
    known = serializers.BooleanField(help_text="Whether this service supports the provider kind.")
    targets = serializers.ListField(child=serializers.CharField(), help_text="Target types it offers.")
    config = serializers.DictField(help_text="Settings; anything credential-like is `***`.")
    auth_kind = serializers.CharField(allow_null=True)
    auth_keys = serializers.ListField(child=serializers.CharField(), help_text="Auth setting names, never values.")


class ProviderListSerializer(serializers.Serializer):  # type: ignore[type-arg]
    providers = ProviderKindSerializer(many=True)
    declared = DeclaredProviderSerializer(many=True, help_text="Providers declared in the definition.")
    count = serializers.IntegerField(help_text="Number of provider kinds.")
