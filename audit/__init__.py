"""The audit log: one row per operation and per failed authentication."""
