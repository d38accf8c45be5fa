"""``python -m secretsapi.cli``: the same program as the installed ``secretsctl``."""

from secretsapi.cli.entry import main

main(prog_name="secretsctl")
