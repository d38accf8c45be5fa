"""Why a job is refused before it is queued (the API answers these with their status)."""

from __future__ import annotations

from secretsapi.service.errors import ServiceError


class NoWorker(ServiceError):
    """No job worker is alive to run the job's queue: answered at once (503), never queued to wait."""

    code = "no_worker"


class TooManyJobs(ServiceError):
    """The caller, or the server, has as many jobs queued or running as allowed (429)."""

    code = "too_many_jobs"

    def __init__(self, message: str, *, wait: int) -> None:
        super().__init__(message)
        self.wait = wait
