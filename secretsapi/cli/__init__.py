"""``secretsctl``: SecretZero's command line over this service's operations (Click and Rich).

A thin interface like the API and ``manage.py``: every subcommand calls ``secretsapi.actions``,
is audited as ``cli:<os user>``, and prints through ``secretsapi.management.reports``, so it says
and exits what the management commands say and exit.
"""

import os

import django
from django.apps import apps

# Set up here, before the program's modules import the interface layer (the actions, the audit
# models), with the project's settings as manage.py sets them.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
if not apps.ready:
    django.setup()

from secretsapi.cli.app import main

__all__ = ["main"]
