"""Django app for the secrets API."""

from django.apps import AppConfig


class SecretsApiConfig(AppConfig):
    name = "secretsapi"
    verbose_name = "Secrets API"

    def ready(self) -> None:
        # Registers the OpenAPI security scheme of the authentication class.
        from secretsapi.api import schema  # noqa: F401
