"""WSGI entry point used by gunicorn (``project.wsgi:application``)."""

import os
from importlib import import_module

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

application = get_wsgi_application()

# What a first request would import (the URLs with every view, and the engine's operations that
# short requests run in the web worker): paid by each web worker as it starts, not by its first
# caller (a first one-secret validation took 130 ms of imports, where the next take a few ms).
import_module(settings.ROOT_URLCONF)
import_module("secretsapi.operations").warm_up(parse=False)
