"""``python -m secretsapi.cli``: the same program as the installed ``secretsctl``."""

from secretsapi.cli.program import main

main(prog_name="secretsctl")
