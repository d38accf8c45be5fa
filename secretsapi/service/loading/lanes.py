"""SecretZero's environment lanes: the ``environments`` block and the ``target_profiles`` it selects."""

from __future__ import annotations

from typing import Any

from secretsapi.service.definition.model import EnvironmentProfile, Environments, TargetProfile
from secretsapi.service.loading.field_checks import FieldChecks

ENVIRONMENTS_KEY = "environments"
TARGET_PROFILES_KEY = "target_profiles"


def environments(checker: FieldChecks, value: Any) -> Environments:
    """SecretZero's ``environments`` block: ``default`` and
    ``profiles.<name>.{var_files, lockfile, target_profile}``.

    Shapes SecretZero refuses are errors; its other profile keys (labels) are kept out of
    the model, unused.
    """
    if value is None:
        return Environments()
    seen = len(checker._interpolator.errors)
    raw = checker._mapping(checker._interpolator.render(value, ENVIRONMENTS_KEY), ENVIRONMENTS_KEY)
    checker.errors.extend(checker._interpolator.errors[seen:])
    default = raw.get("default")
    if default is not None and not isinstance(default, str):
        checker.errors.append("environments.default: must be a string")
        default = None
    profiles: dict[str, EnvironmentProfile] = {}
    for name, profile in checker._mapping(raw.get("profiles"), "environments.profiles").items():
        where = f"environments.profiles.{name}"
        body = checker._mapping(profile, where)
        var_files = body.get("var_files") or []
        if not isinstance(var_files, list) or not all(isinstance(item, str) for item in var_files):
            checker.errors.append(f"{where}.var_files: must be a list of strings")
            var_files = []
        lockfile = body.get("lockfile")
        if lockfile is not None and not isinstance(lockfile, str):
            checker.errors.append(f"{where}.lockfile: must be a string")
            lockfile = None
        target_profile = body.get("target_profile")
        if target_profile is not None and not isinstance(target_profile, str):
            checker.errors.append(f"{where}.target_profile: must be a string")
            target_profile = None
        profiles[str(name)] = EnvironmentProfile(tuple(var_files), lockfile or None, target_profile or None)
    if default is not None and default not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        checker.warnings.append(f"environments.default: no profile named '{default}' (known: {known})")
    return Environments(default, profiles, declared=True)

def target_profiles(checker: FieldChecks, value: Any, environments: Environments) -> dict[str, TargetProfile]:
    """SecretZero's ``target_profiles.<name>.{provider_overrides, target_overrides}``, each a
    mapping of provider alias (or target kind) to config; a lane naming a profile that is not
    there is refused, as SecretZero refuses it. ``identity_policies`` (SecretZero's
    provider-identity policies) is kept, not used."""
    profiles: dict[str, TargetProfile] = {}
    if value is not None:
        seen = len(checker._interpolator.errors)
        raw = checker._mapping(checker._interpolator.render(value, TARGET_PROFILES_KEY), TARGET_PROFILES_KEY)
        checker.errors.extend(checker._interpolator.errors[seen:])
        for name, body in raw.items():
            where = f"{TARGET_PROFILES_KEY}.{name}"
            entry = checker._mapping(body, where)
            overrides = [
                {str(k): checker._mapping(v, f"{where}.{key}.{k}")
                 for k, v in checker._mapping(entry.get(key), f"{where}.{key}").items()}
                for key in ("provider_overrides", "target_overrides")
            ]
            profiles[str(name)] = TargetProfile(*overrides)
    for lane, profile in environments.profiles.items():
        if profile.target_profile is not None and profile.target_profile not in profiles:
            checker.errors.append(f"environments.profiles.{lane}.target_profile: "
                               f"no target profile named '{profile.target_profile}'")
    return profiles
