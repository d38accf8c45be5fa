"""What the HTML pages (the admin, /docs, /redoc) get: their templates and the Content-Security-Policy
on every answer (project/settings.py takes them; none comes from the environment)."""

from __future__ import annotations

from pathlib import Path

from csp.constants import NONCE, NONE, SELF

# Content-Security-Policy (django-csp): pages load this site's scripts, styles, images and
# fonts only, never run inline script, and are never framed; the admin's own <style> blocks carry
# the request's nonce. /docs and /redoc add what Swagger UI and ReDoc need (project/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [Path(__file__).resolve().parent / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
