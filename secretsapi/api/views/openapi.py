"""GET /openapi.json: the schema drf-spectacular generates, kept once generated.

Generating it costs ~250 ms of CPU (a 540 KB document), on an endpoint anyone may ask without a
key: generated at every request, each anonymous GET spent a quarter of a core-second. The schema
depends only on the code, the settings and whether the server runs in insecure mode
(``schema.declare_server_answers``), so one copy is kept per insecure state and dropped whenever
a setting changes (tests change them; a server's settings are fixed).
"""

from __future__ import annotations

import threading
from typing import Any

from django.core.signals import setting_changed
from drf_spectacular.views import SpectacularJSONAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from apikeys.keys import insecure_mode

_kept: dict[bool, Any] = {}
_lock = threading.Lock()


class SchemaView(SpectacularJSONAPIView):
    def _get_schema_response(self, request: Request) -> Response:
        insecure = insecure_mode()
        with _lock:  # one generation at a time: concurrent first requests do not each pay for it
            if insecure not in _kept:
                _kept[insecure] = super()._get_schema_response(request).data  # type: ignore[no-untyped-call]
            data = _kept[insecure]
        disposition = f'inline; filename="{self._get_filename(request, None)}"'  # type: ignore[no-untyped-call]
        return Response(data=data, headers={"Content-Disposition": disposition})


def forget(**kwargs: Any) -> None:
    _kept.clear()


setting_changed.connect(forget, dispatch_uid="secretsapi.api.views.openapi.forget")
