#!/usr/bin/env python
"""Django's command-line utility for the secrets service."""

import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["serve"] and "MALLOC_ARENA_MAX" not in os.environ:
        # glibc gives each thread its own malloc arena and rarely returns their free space: with 4
        # threads a web worker's RSS kept every request's peak. Two arenas hold it down. glibc reads
        # the variable as the process starts, so serve (gunicorn's master, whose web workers fork
        # from it) starts again with it, before anything is imported.
        # No shell: this interpreter with its own arguments, unchanged.
        os.execve(sys.executable, sys.orig_argv, {**os.environ, "MALLOC_ARENA_MAX": "2"})  # noqa: S606
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
