"""``python -m secretsapi.cli``: the same program as the installed ``secretsctl``."""

from secretsapi.cli.app import main

main(prog_name="secretsctl")
