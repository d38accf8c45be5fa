"""``secretsctl``: SecretZero's command line over this service's operations (Click and Rich).

A thin interface like the API and ``manage.py``: every subcommand calls ``secretsapi.actions``,
is audited as ``cli:<os user>``, and prints through ``secretsapi.management.reports``, so it says
and exits what the management commands say and exit. Django is set up only when a subcommand
runs (``handover.operations``): ``--help``, ``--version`` and completion start without it.
"""

from secretsapi.cli.entry import main

__all__ = ["main"]
