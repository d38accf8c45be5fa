"""The REST framework's and the OpenAPI schema's settings (project/settings.py takes them): the
API's one authentication class, error handler, parser and renderer, and how /docs presents it."""

from __future__ import annotations

from secretsapi import __version__

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["secretsapi.api.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated", "secretsapi.api.permissions.HasScope",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["secretsapi.api.parsers.SafeJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "secretsapi.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "secretsapi.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
    # ASCII-escaped JSON: a lone surrogate a client sent (valid in a JSON string, not in UTF-8)
    # and an error message then echoes is rendered as \udXXX instead of failing with a 500.
    "UNICODE_JSON": False,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Secrets orchestration API",
    "DESCRIPTION": (
        "Declare secrets in a definition file; this service generates them, writes them to "
        "their targets, rotates them, checks policies and drift, and audits every operation. "
        "Send the API key in the `X-API-Key` header, or as `Authorization: Bearer <key>`."
    ),
    "VERSION": __version__,
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and both UIs are public (spec: no key needed for /openapi.json, /docs, /redoc).
    "SERVE_AUTHENTICATION": [],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    # Links to one operation (/docs#/sync/sync_secrets) open it.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True},
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Operations in urls.py order (a list before its items, the canonical path before its alias).
    "SORT_OPERATIONS": False,
    # Named tags in reading order: /docs and /redoc group the operations under these.
    "TAGS": [
        {"name": "service", "x-displayName": "Service",
         "description": "What is running: the root and the health check. No key needed."},
        {"name": "secrets", "x-displayName": "Secrets",
         "description": "The secrets the definition declares, their lockfile status and (when the server "
         "allows it) their values."},
        {"name": "sync", "x-displayName": "Sync", "description": "Generate secrets and write them to their targets."},
        {"name": "rotation", "x-displayName": "Rotation", "description": "Which secrets are due, and rotating them."},
        {"name": "checks", "x-displayName": "Checks",
         "description": "Policy compliance and drift between the lockfile and the targets. Findings are data "
         "in a 200 answer, never an error status."},
        {"name": "config", "x-displayName": "Config",
         "description": "Validate a definition, or see the served one with its variables applied."},
        {"name": "discovery", "x-displayName": "Discovery",
         "description": "What this service offers: generators, secret types, target kinds and providers."},
        {"name": "audit", "x-displayName": "Audit",
         "description": "The audit log: who did what, when, and whether it succeeded; newest first."},
        {"name": "jobs", "x-displayName": "Jobs",
         "description": "The long operations run as jobs: their state, progress and, once ended, their result."},
        {"name": "webhooks", "x-displayName": "Webhooks",
         "description": "Signed notifications of rotations, syncs, drift and failed jobs: what was sent, and every "
         "attempt."},
        {"name": "metrics", "x-displayName": "Metrics",
         "description": "Prometheus metrics, computed from the database at each scrape."},
        {"name": "projects", "x-displayName": "Projects",
         "description": "The definitions this service serves, each under `/projects/{name}/`; the spec's own "
         "paths are the `default` project (SERVICE_CONFIG)."},
    ],
    # A webhook delivery's state and a job's, two enums both named after their field "state".
    "ENUM_NAME_OVERRIDES": {"DeliveryStateEnum": "webhooks.models.Delivery.STATES",
                            "JobStateEnum": "jobs.queue.JOB_STATES",
                            # /health's database and workers: each only up or down.
                            "UpDownEnum": ["up", "down"]},
    # 414, insecure mode's 400 and 403, and no NUL in request strings (secretsapi/api/schema.py).
    # The /projects/{project}/ copies of every endpoint are described once, on GET /projects.
    "PREPROCESSING_HOOKS": ["secretsapi.api.schema.without_project_copies"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums", "secretsapi.api.schema.declare_server_answers",
    ],
}
