"""Django app for the admin site's users: no admin user may take a name the audit log reserves."""

from django.apps import AppConfig


class AdminUsersConfig(AppConfig):
    name = "adminusers"
    verbose_name = "Admin users"
