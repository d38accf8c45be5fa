"""GET /audit/logs: query parameters and the page."""

from __future__ import annotations

from datetime import UTC, tzinfo
from functools import cached_property
from typing import Any

from django.utils import timezone
from rest_framework import serializers
from rest_framework.fields import empty

from audit.models import AuditEntry, outcome_of
from secretsapi.api.pagination import PageLinksSerializer
from secretsapi.api.serializers.strict import DB_INT_MAX, StrictQuerySerializer


class QueryBooleanField(serializers.BooleanField):
    """Exactly ``true`` or ``false``: DRF's field also takes 1, yes, on... and reads absent as false."""

    TRUE_VALUES = {"true"}  # noqa: RUF012 - DRF's class attributes (the schema's enum reads them)
    FALSE_VALUES = {"false"}  # noqa: RUF012
    NULL_VALUES: set[str | None] = set()  # noqa: RUF012
    default_empty_html = empty

    def to_internal_value(self, data: Any) -> bool:
        # DRF lower-cases before comparing; "True" is not what a user of JSON means either.
        if data in ("true", "false"):
            return bool(data == "true")
        self.fail("invalid", input=data)
        raise AssertionError  # fail() raises


class AuditQuerySerializer(StrictQuerySerializer):
    # The text filters match exactly, spaces included (trimming would make "\x1c" an empty value).
    limit = serializers.IntegerField(
        min_value=1, max_value=1000, default=50,
        help_text="Entries per page. The NDJSON export streams every matching row unless it is given.")
    offset = serializers.IntegerField(min_value=0, max_value=DB_INT_MAX, default=0)
    action = serializers.CharField(required=False, allow_blank=False, trim_whitespace=False, max_length=64)
    resource = serializers.CharField(required=False, allow_blank=False, trim_whitespace=False, max_length=255)
    success = QueryBooleanField(required=False, help_text="Only rows with this outcome: true or false.")
    user = serializers.CharField(required=False, allow_blank=False, trim_whitespace=False, max_length=255,
                                 help_text="Only rows of this user, exactly (service, a key, cli:alice, admin:bob).")
    since = serializers.DateTimeField(
        required=False, default_timezone=UTC,
        help_text="Rows at or after this instant (ISO 8601; without a zone it is UTC). Inclusive.")
    until = serializers.DateTimeField(
        required=False, default_timezone=UTC,
        help_text="Rows before this instant (ISO 8601; without a zone it is UTC). Exclusive.")
    project = serializers.CharField(
        required=False, allow_blank=False, trim_whitespace=False, max_length=255,
        help_text="Only rows of this service project, exactly (`default`: SERVICE_CONFIG's). Under "
                  "`/projects/{project}/` the path's project is the filter.")
    secret = serializers.CharField(
        required=False, allow_blank=False, trim_whitespace=False, max_length=255,
        help_text="Every row about this secret: its own (resource secret:<name>) and bulk operations "
                  "naming it in their details (a sync's generated, skipped, failed lists, errors).")
    format = serializers.ChoiceField(
        choices=["json", "jsonl"], required=False,
        help_text="`jsonl`: the NDJSON export, as `Accept: application/x-ndjson` asks for it.")


class AuditEntrySerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    # Beyond the spec's six fields (optional extras, always sent): the outcome, and where the
    # operation ran and came from.
    outcome = serializers.CharField(
        required=False,
        help_text="`ok`, `failed`, `started` (not reported back yet) or a finding that is no failure: "
                  "`drift` (a drift check that found drift; `success` is true).")
    project = serializers.CharField(required=False, allow_null=True,
                                    help_text="The service's project it ran in (`default`: the one SERVICE_CONFIG "
                                              "names), when any.")
    definition_project = serializers.CharField(required=False, allow_null=True,
                                               help_text="The definition's own `metadata.project`, when set.")
    definition = serializers.CharField(required=False, allow_null=True, help_text="The definition file's path.")
    environment = serializers.CharField(
        required=False, allow_null=True,
        help_text="The environment in effect (`environments.profiles.<name>`), when any.")
    origin = serializers.CharField(
        required=False, allow_null=True,
        help_text="Where the call came from: `client:<address>` (the API and the admin; behind the proxy, the "
                  "address it forwards), `cli:<os user>@<host>` (a command), `worker:<worker id>` (scheduled work).")

    class Meta:
        model = AuditEntry
        fields = ("timestamp", "action", "resource", "user", "details", "success", "outcome", "project",
                  "definition_project", "definition", "environment", "origin")

    @cached_property
    def _zone(self) -> tzinfo:
        # Looked up once per page (one child serves every row): it is a context-local read.
        return timezone.get_current_timezone()

    def to_representation(self, instance: AuditEntry) -> dict[str, Any]:
        # The Meta fields are the schema; the row's values already have their JSON types, and
        # DRF's field walk was ~30% of a page's CPU (8 connections on offset=100000 queue on it).
        # The timestamp is DRF's ISO 8601 in the current zone, "Z" for UTC (a test compares).
        stamp = instance.timestamp.astimezone(self._zone).isoformat()
        return {
            "timestamp": stamp[:-6] + "Z" if stamp.endswith("+00:00") else stamp,
            "action": instance.action,
            "resource": instance.resource,
            "user": instance.user,
            "details": instance.details,
            "success": instance.success,
            "outcome": outcome_of(instance.outcome, instance.success),
            "project": instance.project or None,
            "definition_project": instance.definition_project or None,
            "definition": instance.definition or None,
            "environment": instance.environment or None,
            "origin": instance.origin or None,
        }


class AuditPageSerializer(PageLinksSerializer):
    entries = AuditEntrySerializer(many=True)
    count = serializers.IntegerField(help_text="Number of entries returned in this page.")
    page = serializers.IntegerField(help_text="offset // limit + 1")
    per_page = serializers.IntegerField(help_text="The page size: the requested limit.")
