"""Django app for the secrets API."""

from django.apps import AppConfig


class SecretsApiConfig(AppConfig):
    name = "secretsapi"
    verbose_name = "Secrets API"
