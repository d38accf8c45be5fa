"""Framework-free secrets engine: definitions, generators, lockfile, targets and operations.

Nothing in this package may import Django; a guard test enforces it.
"""
