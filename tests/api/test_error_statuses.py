"""Every engine error has its own HTTP status, listed by class in the API's table."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import secretsapi.service as service
from secretsapi.api.errors import SERVICE_STATUS, service_status
from secretsapi.service import errors
from secretsapi.service.errors import ServiceError


def _subclasses(cls: type[ServiceError]) -> set[type[ServiceError]]:
    """The engine's subclasses of ``cls`` (not those a test defines)."""
    found: set[type[ServiceError]] = set()
    for sub in cls.__subclasses__():
        found |= _subclasses(sub)
        if sub.__module__.startswith("secretsapi.service."):
            found.add(sub)
    return found


def test_every_service_error_subclass_has_a_status() -> None:
    # Import every engine module, so a subclass defined anywhere in the engine is seen.
    for module in pkgutil.walk_packages(service.__path__, "secretsapi.service."):
        importlib.import_module(module.name)
    missing = sorted(cls.__qualname__ for cls in _subclasses(ServiceError) if cls not in SERVICE_STATUS)
    assert missing == []


def test_every_engine_error_is_defined_in_the_errors_module() -> None:
    assert {cls.__module__ for cls in _subclasses(ServiceError)} == {errors.__name__}


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.SecretNotDefined("db"), 404),
        (errors.VarFileInvalid("bad"), 400),
        (errors.ValueReadDisabled("off"), 403),
        (errors.LockTimeout("slow"), 503),
        (errors.TargetError("down"), 500),
    ],
)
def test_statuses_follow_the_class_not_the_code(error: ServiceError, status: int) -> None:
    error.code = "renamed"  # the code is for clients; the status must not depend on it
    assert service_status(error) == status


def test_an_unlisted_subclass_takes_its_parents_status() -> None:
    class Narrower(errors.SecretNotDefined):
        pass

    assert service_status(Narrower("db")) == 404
