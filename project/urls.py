"""Top-level URLs: the API, its documentation and the admin."""

from __future__ import annotations

from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from secretsapi.api.views.openapi import SchemaView

# The apps' admin modules (settings.py installs the admin without autodiscovery).
admin.autodiscover()

# What the docs pages need beyond settings.CONTENT_SECURITY_POLICY (checked in headless Chromium:
# tests/api/test_docs_browser.py). Swagger UI's page carries an inline <style> block (drf-spectacular's
# template), and its script comes from /docs?script (the "split" view: no inline script); ReDoc
# writes its styles into <style> elements as it renders and parses the schema in a worker made
# from a blob: URL. Neither runs inline script.
DOCS_CSP = {"style-src": [SELF, UNSAFE_INLINE]}
REDOC_CSP = {"style-src": [SELF, UNSAFE_INLINE], "worker-src": [SELF, "blob:"]}

urlpatterns = [
    path("openapi.json", SchemaView.as_view(), name="openapi"),
    path("docs", csp_update(DOCS_CSP)(SpectacularSwaggerSplitView.as_view(url_name="openapi")), name="docs"),
    path("redoc", csp_update(REDOC_CSP)(SpectacularRedocView.as_view(url_name="openapi")), name="redoc"),
    path("admin/", admin.site.urls),
    path("", include("secretsapi.api.urls")),
]

handler400 = "secretsapi.api.errors.handler400"
handler403 = "secretsapi.api.errors.handler403"
handler404 = "secretsapi.api.errors.handler404"
handler500 = "secretsapi.api.errors.handler500"
