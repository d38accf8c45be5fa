"""The API's paths, unversioned and exactly as the spec writes them."""

from __future__ import annotations

from django.urls import path

from secretsapi.api.views import audit, meta

urlpatterns = [
    path("", meta.RootView.as_view(), name="root"),
    path("health", meta.HealthView.as_view(), name="health"),
    path("audit/logs", audit.AuditLogListView.as_view(), name="audit-logs"),
]
