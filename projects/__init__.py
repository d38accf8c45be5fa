"""Projects: one service, many definitions, each served under ``/projects/{name}/``."""
