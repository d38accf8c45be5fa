"""What exists: the lockfile, the locks around it, and the one write that plans, generates,
stores and records values (``write``)."""
