"""GET /openapi.json: the schema drf-spectacular generates, kept once generated.

Generating it costs ~250 ms of CPU (a 540 KB document), on an endpoint anyone may ask without a
key: generated at every request, each anonymous GET spent a quarter of a core-second. The schema
depends only on the code, the settings and whether the server runs in insecure mode
(``schema.declare_server_answers``), so one copy is kept per insecure state and dropped whenever
a setting changes (tests change them; a server's settings are fixed), but for the few no schema
shows (``NOT_IN_THE_SCHEMA``). Rendering that copy to JSON cost 35-45 ms more at every request:
the bytes are kept too, per insecure state and media type, for the two media types as such (an
``Accept`` with parameters, such as ``indent``, any client may vary, is rendered each time, so
what is kept stays bounded).
"""

from __future__ import annotations

import threading
from typing import Any

from django.core.signals import setting_changed
from django.http import HttpResponse
from drf_spectacular.views import SpectacularJSONAPIView
from rest_framework.request import Request

from apikeys.keys import insecure_mode

_kept: dict[bool, Any] = {}
_rendered: dict[tuple[bool, str], bytes] = {}
_lock = threading.Lock()


class SchemaView(SpectacularJSONAPIView):
    def _get_schema_response(self, request: Request) -> HttpResponse:
        insecure = insecure_mode()
        renderer = request.accepted_renderer
        accepted = request.accepted_media_type
        with _lock:  # one generation at a time: concurrent first requests do not each pay for it
            if insecure not in _kept:
                _kept[insecure] = super()._get_schema_response(request).data  # type: ignore[no-untyped-call]
            data = _kept[insecure]
            body = _rendered.get((insecure, accepted))
        if body is None:
            body = renderer.render(data, accepted, self.get_renderer_context())
            if accepted == renderer.media_type:
                with _lock:
                    _rendered[(insecure, accepted)] = body
        # The Content-Type DRF's Response gives a renderer's output.
        content_type = f"{renderer.media_type}; charset={renderer.charset}" if renderer.charset else renderer.media_type
        disposition = f'inline; filename="{self._get_filename(request, None)}"'  # type: ignore[no-untyped-call]
        return HttpResponse(body, content_type=content_type, headers={"Content-Disposition": disposition})


# Settings the tests change at nearly every test that shape no schema: where the project's files
# are, whether its scripts may run, the password hasher, when static files are found, and the key
# (the schema depends only on whether there is one: the insecure state its copies are kept by).
# A kept copy outlives their changes.
NOT_IN_THE_SCHEMA = frozenset({"SERVICE_CONFIG", "SERVICE_LOCKFILE", "PASSWORD_HASHERS",
                               "WHITENOISE_AUTOREFRESH", "SERVICE_API_KEY", "SERVICE_ALLOW_SCRIPTS"})


def forget(setting: str = "", **kwargs: Any) -> None:
    if setting in NOT_IN_THE_SCHEMA:
        return
    with _lock:
        _kept.clear()
        _rendered.clear()


setting_changed.connect(forget, dispatch_uid="secretsapi.api.views.openapi.forget")
