"""The admin's pages: each app's model admin (read-only where it holds records) and the audit
log's overview and charts pages, registered when Django's admin discovers this app's ``admin``.

Each module registers its models with their own app, so every page keeps its address
(``/admin/audit/auditentry/``, ``/admin/webhooks/endpoint/``, ...).
"""

from secretsapi.admin import apikeys, audit, jobs, projects, webhooks  # noqa: F401 - registering is importing
