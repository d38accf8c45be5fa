"""Top-level URLs: the API, its documentation and the admin."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularRedocView, SpectacularSwaggerView

# The apps' admin modules (settings.py installs the admin without autodiscovery).
admin.autodiscover()

urlpatterns = [
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path("docs", SpectacularSwaggerView.as_view(url_name="openapi"), name="docs"),
    path("redoc", SpectacularRedocView.as_view(url_name="openapi"), name="redoc"),
    path("admin/", admin.site.urls),
    path("", include("secretsapi.api.urls")),
]

handler400 = "secretsapi.api.errors.handler400"
handler403 = "secretsapi.api.errors.handler403"
handler404 = "secretsapi.api.errors.handler404"
handler500 = "secretsapi.api.errors.handler500"
