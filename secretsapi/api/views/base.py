"""The base of every API view: a query parameter the view does not declare is refused (422)."""

from __future__ import annotations

from typing import Any, ClassVar

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from projects import current
from secretsapi.api.projects import resolve_project
from secretsapi.api.serializers.strict import query_names, refuse_unknown


class StrictAPIView(APIView):
    """``query_serializer`` declares the query parameters (none by default).

    Checked after authentication (a caller without a key learns nothing) and before the view
    runs, so nothing is performed for ``POST /sync?dry_run=true``. The values themselves are
    validated by the view through the same serializer (a ``StrictQuerySerializer``).
    ``lenient_query`` is for the unauthenticated probes (``/``, ``/health``): load balancers and
    browsers add parameters of their own. ``no_store`` marks every answer ``Cache-Control: no-store``.
    """

    query_serializer: ClassVar[type[serializers.Serializer] | None] = None  # type: ignore[type-arg]
    lenient_query: ClassVar[bool] = False
    # Answers that show a definition or a value: no cache may keep them, errors included.
    no_store: ClassVar[bool] = False
    # Served in a project: the path's (``/projects/{project}/...``), else the default one; a key
    # limited to other projects gets 404 here, as for a project that does not exist.
    project_scoped: ClassVar[bool] = True
    project_path: str | None = None

    def dispatch(self, request: Any, *args: Any, project: str | None = None, **kwargs: Any) -> Any:
        self.project_path = project
        with current.using(None):  # set in ``initial`` once the key is known; never outlives the request
            return super().dispatch(request, *args, **kwargs)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if self.project_scoped:
            current.enter(*resolve_project(request, self.project_path))
        if self.lenient_query or not request.query_params:
            return
        refuse_unknown(request.query_params.keys(), query_names(self.query_serializer), "query parameter")

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        if self.no_store:
            response["Cache-Control"] = "no-store"
        return response
