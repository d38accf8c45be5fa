"""Django app for running the service on servers (see the package's docstring)."""

from __future__ import annotations

from django.apps import AppConfig


class DeploymentConfig(AppConfig):
    name = "deployment"
    verbose_name = "Deployment"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # What project/settings.py must not do when imported (a tool, a linter or gunicorn's config
        # may import it): make the data folder private and the SQLite file 0600 before SQLite
        # opens it. First of the apps, so before anything may connect.
        from deployment.files import prepare_private_files

        prepare_private_files()
