"""GET /whoami: the key a request carries, as the service knows it: its name, its scopes and the
projects it may touch. Any valid key may ask (it needs no scope); ``secretsctl whoami`` and
``secretsctl login`` read it."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apikeys.keys import insecure_mode
from apikeys.scopes import SCOPES
from audit.recorder import record
from secretsapi.api.authentication import Principal, request_principal
from secretsapi.api.docs import errors, response_example
from secretsapi.api.views.base import StrictAPIView


class WhoamiSerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField(allow_null=True, help_text="The key's name, as audit rows name it "
                                 "(`service` for SERVICE_API_KEY); null in insecure mode.")
    scopes = serializers.ListField(child=serializers.CharField(), help_text="The key's scopes.")
    projects = serializers.ListField(child=serializers.CharField(), allow_null=True,
                                     help_text="The projects the key may touch; null: every project.")
    insecure = serializers.BooleanField(help_text="The service has no key configured: it accepts every "
                                        "request, with or without a key.")


def key_projects(principal: Principal) -> list[str] | None:
    """The projects ``principal`` may touch; None: every one (keys without a project limit)."""
    return None if principal.projects is None else sorted(principal.projects)


class WhoamiView(StrictAPIView):
    project_scoped = False  # the key's, whichever projects it may touch

    @extend_schema(
        responses={200: OpenApiResponse(WhoamiSerializer, description="The key's name, scopes and projects."),
                   **errors(401, 500)},
        operation_id="whoami",
        summary="Who the API key is",
        description="The name, scopes and projects of the key the request carries (any valid key may ask; "
        "no scope is needed). In insecure mode (no key configured) `insecure` is true and `name` null. "
        "Audited as `whoami`.",
        examples=[response_example("A named key", {"name": "ci-deploy", "scopes": ["read", "write"],
                                                   "projects": None, "insecure": False})],
        tags=["service"],
    )
    def get(self, request: Request) -> Response:
        principal = request_principal(request)
        assert principal is not None  # noqa: S101 - authenticated by ApiKeyAuthentication
        projects = key_projects(principal)
        body = {"name": principal.audit_name, "scopes": [s for s in SCOPES if s in principal.scopes],
                "projects": projects, "insecure": insecure_mode()}
        # A key confined to one project works in it: its row is that project's, as all its others are.
        only = projects[0] if projects is not None and len(projects) == 1 else None
        record(action="whoami", resource="whoami", user=principal.audit_name, success=True,
               details={"scopes": body["scopes"]}, context={"project": only} if only else None)
        return Response(WhoamiSerializer(body).data)
