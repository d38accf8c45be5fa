"""Django project: settings, URLs, WSGI entry point and gunicorn configuration."""
