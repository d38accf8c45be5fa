"""GET/POST /projects and GET/DELETE /projects/{name}: the projects this service serves (scope ``admin``)."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from apikeys import keys
from projects import registry
from projects.current import ProjectInfo
from projects.errors import ProjectNotFound
from secretsapi.api.authentication import actor, request_principal
from secretsapi.api.docs import EXAMPLE_TIME, errors, request_example, response_example
from secretsapi.api.serializers.projects import (
    ProjectCreateRequestSerializer,
    ProjectListSerializer,
    ProjectSerializer,
)
from secretsapi.api.views.base import StrictAPIView

NAME = OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH, description="The project's name.")
EXAMPLE = {"name": "payments", "definition": "/srv/payments/Secretfile.yml", "default": False,
           "created": EXAMPLE_TIME}
PREFIX_HELP = ("Every other endpoint of this API is also served under `/projects/{name}/` (`GET "
               "/projects/payments/secrets`, `POST /projects/payments/sync`...) with the same bodies and "
               "answers, on that project's definition; the unprefixed paths are the `default` project's.")


def _limits(request: Request) -> keys.Limits | None:
    principal = request_principal(request)
    return principal.projects if principal is not None else None


def _visible(request: Request, name: str) -> ProjectInfo:
    """The project, looked up first; 404 as for one that does not exist when the key may not touch it."""
    found = registry.find(name)
    limits = _limits(request)
    if limits is not None and name not in limits:
        raise ProjectNotFound(name)
    return found


class ProjectListView(StrictAPIView):
    project_scoped = False

    @extend_schema(
        responses={200: OpenApiResponse(ProjectListSerializer, description="The default project first."),
                   **errors(401, 403, 500)},
        operation_id="list_projects", summary="List projects",
        description="Every project this service serves: `default` (SERVICE_CONFIG's) first, then the added ones "
        "by name. " + PREFIX_HELP,
        examples=[response_example("Two projects", {"projects": [
            {"name": "default", "definition": "/srv/app/Secretfile.yml", "default": True, "created": None},
            EXAMPLE], "count": 2})],
        tags=["projects"],
    )
    def get(self, request: Request) -> Response:
        limits = _limits(request)
        found = [p for p in registry.all_projects() if limits is None or p.name in limits]
        return Response({"projects": ProjectSerializer(found, many=True).data, "count": len(found)})

    @extend_schema(
        request=ProjectCreateRequestSerializer,
        responses={201: OpenApiResponse(ProjectSerializer, description="The project, served from now on."),
                   **errors(400, 401, 403, 409, 413, 415, 422, 500)},
        operation_id="create_project", summary="Add a project",
        description="Serves the definition at `definition` as the project `name`, at once on every instance. "
        "The path must be absolute, an existing file, outside the service's data folder, and served by no other "
        "project. 409 for a name in use, 422 for a refused name or path.",
        examples=[request_example("A project", {"name": "payments", "definition": "/srv/payments/Secretfile.yml"},
                                  "Serve a second definition"),
                  OpenApiExample("Added", response_only=True, status_codes=["201"], value=EXAMPLE)],
        tags=["projects"],
    )
    def post(self, request: Request) -> Response:
        if _limits(request) is not None:
            raise PermissionDenied("A key limited to projects cannot add one: use a key without a project limit.")
        body = ProjectCreateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        added = registry.add(body.validated_data["name"], body.validated_data["definition"], actor=actor(request))
        return Response(ProjectSerializer(added).data, status=201)


class ProjectDetailView(StrictAPIView):
    project_scoped = False

    @extend_schema(
        parameters=[NAME],
        responses={200: OpenApiResponse(ProjectSerializer, description="The project."), **errors(401, 403, 404, 500)},
        operation_id="get_project", summary="Read a project",
        examples=[response_example("A project", EXAMPLE)], tags=["projects"],
    )
    def get(self, request: Request, name: str) -> Response:
        return Response(ProjectSerializer(_visible(request, name)).data)

    @extend_schema(
        parameters=[NAME], responses={204: None, **errors(401, 403, 404, 422, 500)},
        operation_id="delete_project", summary="Remove a project",
        description="Stops serving the project; its definition, lockfile and targets are left as they are. "
        "The `default` project cannot be removed (422).",
        tags=["projects"],
    )
    def delete(self, request: Request, name: str) -> HttpResponse:
        _visible(request, name)
        registry.remove(name, actor=actor(request))
        return HttpResponse(status=204)
