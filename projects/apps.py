"""Django app for the projects the service serves beside its default one (SERVICE_CONFIG)."""

from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"
    verbose_name = "Projects"
    default_auto_field = "django.db.models.BigAutoField"
