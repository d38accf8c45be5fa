"""``secretsctl --addr URL``: the same subcommands answered by a running service over its API.

``address`` reads where to go (``--addr`` / ``SECRETSCTL_ADDR``, ``--project``, ``--ca-bundle``)
and which key to send; ``client`` speaks HTTP (requests) and follows a job's progress;
``operations`` turns each subcommand into its requests and prints what the local mode prints;
``credentials`` keeps the key ``secretsctl login`` stored.
"""
