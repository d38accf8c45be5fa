"""GET/POST /projects and GET/DELETE /projects/{name}: a project as the API shows it."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from projects.current import ProjectInfo
from secretsapi.api.serializers.strict import StrictCharField, StrictRequestSerializer


class ProjectSerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField(help_text="Its name: its API paths are `/projects/{name}/...`.")
    definition = serializers.CharField(help_text="Its definition file's absolute path.")
    default = serializers.BooleanField(help_text="The default project (SERVICE_CONFIG's): the spec's own paths.")
    created = serializers.DateTimeField(allow_null=True, help_text="When it was added (null: the default one).")

    def to_representation(self, instance: ProjectInfo) -> dict[str, Any]:
        return {"name": instance.name, "definition": str(instance.definition), "default": instance.is_default,
                "created": instance.created.isoformat() if instance.created else None}


class ProjectListSerializer(serializers.Serializer):  # type: ignore[type-arg]
    projects = ProjectSerializer(many=True)
    count = serializers.IntegerField()


class ProjectCreateRequestSerializer(StrictRequestSerializer):
    name = StrictCharField(max_length=63,
                                 help_text="Lower-case letters, digits and '-', starting and ending with a letter "
                                           "or digit; `default` is reserved.")
    definition = StrictCharField(max_length=1024,
                                       help_text="The definition file's absolute path on the server.")
