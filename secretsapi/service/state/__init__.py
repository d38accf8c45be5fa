"""What exists: the lockfile, the locks around it, and the write that generates, stores and records values."""
