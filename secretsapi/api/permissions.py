"""The scope check: a view is allowed when the caller's key has the scope ``SCOPES`` gives it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from django.urls import URLPattern
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from apikeys.scopes import ANY_KEY, OPERATION_SCOPED, REQUIRED_SCOPE
from secretsapi.api.authentication import request_principal

if TYPE_CHECKING:
    from rest_framework.views import APIView


class HasScope(BasePermission):
    """Refuses (403, audited by the exception handler) a key without the endpoint's scope."""

    message = "This API key does not have the scope this endpoint needs."

    def has_permission(self, request: Request, view: APIView) -> bool:
        principal = request_principal(request)
        if principal is None:
            return False
        match = request.resolver_match
        if match is not None and match.url_name in OPERATION_SCOPED:
            return True  # the view checks each job's operation's scope
        if match is not None and match.url_name in ANY_KEY:
            return True
        scope = REQUIRED_SCOPE.get(match.url_name or "") if match is not None else None
        if scope is None:
            return False  # an endpoint no scope lists is refused to every key: fail closed
        if scope in principal.scopes:
            return True
        self.message = f"This API key does not have the {scope!r} scope this endpoint needs."
        return False


def endpoint_texts() -> dict[str, str]:
    """URL name -> ``METHOD /path`` for every endpoint in the URL conf (the README table's cells)."""
    from secretsapi.api.urls import urlpatterns

    texts: dict[str, str] = {}
    for pattern in urlpatterns:
        if not isinstance(pattern, URLPattern):
            continue
        view: Any = pattern.callback
        cls = view.view_class
        methods = [m.upper() for m in ("get", "post", "put", "patch", "delete") if hasattr(cls, m)]
        route = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        texts[str(pattern.name)] = f"{' '.join(methods)} {route}"
    return texts
