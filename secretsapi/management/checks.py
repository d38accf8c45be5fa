"""Which of Django's system checks a command runs: every one but the web interface's for the
commands that serve no page. The URL configuration's check imports every view (DRF, which
imports psycopg, requests and PyYAML; drf-spectacular, which imports Django's test client), the
admin's and the templates' every template tag library: most of the start-up of a command that
serves nothing, a job worker's included (0.3-0.4 s of CPU each). ``serve`` and ``manage.py
check`` still run every check. Only Django here: the light commands import it too."""

from __future__ import annotations

from django.core.checks import Tags
from django.core.management.base import BaseCommand

# The system checks of what only the web interface uses.
WEB_CHECKS = frozenset({Tags.urls, Tags.admin, Tags.templates})

# Django's ``requires_system_checks`` of a command that serves no page.
WITHOUT_WEB_CHECKS = tuple(tag for name, tag in vars(Tags).items()
                           if not name.startswith("_") and tag not in WEB_CHECKS)


class PagelessCommand(BaseCommand):
    """A command that serves no page: Django's checks but the web interface's."""

    requires_system_checks = WITHOUT_WEB_CHECKS
