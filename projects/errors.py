"""The projects' refusals, as the engine's errors are: a stable ``code``, a message for users."""

from __future__ import annotations

from secretsapi.service.errors import ServiceError


class ProjectNotFound(ServiceError):
    """No such project, or one the caller's key may not touch: the same answer for both."""

    code = "project_not_found"

    def __init__(self, name: str) -> None:
        super().__init__(f"No project named {name!r} (project_not_found).")


class ProjectRefused(ServiceError):
    """An add or a remove that cannot be done: the message names why and the fix."""

    code = "project_refused"


class ProjectExists(ProjectRefused):
    code = "project_exists"


class EnvironmentRefused(ServiceError):
    """An environment the caller's key may not use: answered as an unknown one (nothing listed)."""

    code = "environment_not_found"

    def __init__(self, name: str | None) -> None:
        # None: no environment named, and the definition's default one unknown (no default, or a
        # definition that cannot be read without the request's var files) or not the key's.
        super().__init__(f"Unknown environment {name!r} (environment_not_found)." if name is not None else
                         "No environment named, and the definition has no default one this key may use: "
                         "name one (environment_not_found).")
