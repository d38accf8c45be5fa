"""The API's paths, unversioned and exactly as the spec writes them."""

from __future__ import annotations

from django.urls import include, path

# Registers the OpenAPI extensions (the key's security scheme) wherever the API is served or its
# schema generated: not at Django's start, which would load drf-spectacular in every command.
from secretsapi.api import schema  # noqa: F401
from secretsapi.api.views import (
    audit,
    config,
    discovery,
    jobs,
    meta,
    metrics,
    operations,
    projects,
    secrets,
    webhooks,
    whoami,
)

# Every endpoint of a project: the default one's at the root, any other's under /projects/{project}/.
project_patterns = [
    path("secrets", secrets.SecretListView.as_view(), name="secrets"),
    path("status", secrets.SecretStatusListView.as_view(), name="secrets-status"),
    path("secrets/<str:secret_name>/status", secrets.SecretStatusView.as_view(), name="secret-status"),
    path("secrets/<str:name>", secrets.SecretValueView.as_view(), name="secret-value"),
    path("sync", operations.SyncView.as_view(), name="sync"),
    path("rotation/check", operations.RotationCheckView.as_view(), name="rotation-check"),
    path("rotation/execute", operations.RotationExecuteView.as_view(), name="rotation-execute"),
    path("policy/check", operations.PolicyCheckView.as_view(), name="policy-check"),
    path("drift/check", operations.DriftCheckView.as_view(), name="drift-check"),
    # Aliases named in the spec's overview: same bodies, same results, same audit rows.
    path("drift", operations.DriftAliasView.as_view(), name="drift"),
    path("policy", operations.PolicyAliasView.as_view(), name="policy"),
    path("agent/sync", operations.AgentSyncView.as_view(), name="agent-sync"),
    path("config/validate", config.ConfigValidateView.as_view(), name="config-validate"),
    path("config/render", config.ConfigRenderView.as_view(), name="config-render"),
    path("generators", discovery.GeneratorListView.as_view(), name="generators"),
    path("secret-types", discovery.SecretTypeListView.as_view(), name="secret-types"),
    path("targets", discovery.TargetKindListView.as_view(), name="targets"),
    path("providers", discovery.ProviderListView.as_view(), name="providers"),
    path("audit/logs", audit.AuditLogListView.as_view(), name="audit-logs"),
    path("jobs", jobs.JobListView.as_view(), name="jobs"),
    path("jobs/<str:job_id>", jobs.JobDetailView.as_view(), name="job"),
    path("webhooks", webhooks.WebhookListView.as_view(), name="webhooks"),
    path("webhooks/<str:webhook_id>", webhooks.WebhookDetailView.as_view(), name="webhook"),
    path("webhooks/<str:webhook_id>/deliveries", webhooks.WebhookDeliveryListView.as_view(),
         name="webhook-deliveries"),
    path("metrics", metrics.MetricsView.as_view(), name="metrics"),
]

urlpatterns = [
    path("", meta.RootView.as_view(), name="root"),
    path("health", meta.HealthView.as_view(), name="health"),
    path("whoami", whoami.WhoamiView.as_view(), name="whoami"),
    *project_patterns,
    path("projects", projects.ProjectListView.as_view(), name="projects"),
    path("projects/<str:name>", projects.ProjectDetailView.as_view(), name="project"),
    # The same views, names and scopes; the view reads the project from the path (views.base).
    path("projects/<str:project>/", include((project_patterns, "api"), namespace="in-project")),
]
