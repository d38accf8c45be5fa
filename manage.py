#!/usr/bin/env python
"""Django's command-line utility for the secrets service."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018 - imports the settings, which read the environment
    except ImproperlyConfigured as exc:
        # A SERVICE_* value the settings refuse: one line naming the variable, not a traceback.
        sys.exit(f"Configuration error: {exc}")
    except ImportError:
        pass  # Django reports an unimportable settings module itself, as before
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
