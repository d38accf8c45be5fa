"""Definition loading, checking, units, hashes, the parse cache and POST /config/validate."""

from __future__ import annotations

import copy
import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from secretsapi.service.definition.checker import DefinitionChecker
from secretsapi.service.definition.loader import clear_definition_cache, load_definition
from secretsapi.service.definition.yaml_loader import read_text
from secretsapi.service.errors import (
    DefinitionInvalid,
    DefinitionNotFound,
    SecretNotDefined,
    VarFileInvalid,
    VarFileNotFound,
)
from secretsapi.service.validate import validate_document
from tests.factories import COMPAT


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    clear_definition_cache()


@pytest.fixture
def compat(tmp_path: Path) -> Path:
    """A writable copy of the SecretZero-synced project; the shared folder is never touched."""
    target = tmp_path / "compat"
    shutil.copytree(COMPAT, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target / "Secretfile.yml"


def write(folder: Path, doc: Any, name: str = "Secretfile.yml") -> Path:
    path = folder / name
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False))
    return path


def load(folder: Path, doc: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("environ", {})
    return load_definition(write(folder, doc), **kwargs)


def load_errors(folder: Path, doc: Any, **kwargs: Any) -> list[str]:
    with pytest.raises(DefinitionInvalid) as caught:
        load(folder, doc, **kwargs)
    return caught.value.errors


def subfolder(folder: Path) -> Path:
    path = folder / "other"
    path.mkdir()
    return path


def secret(**fields: Any) -> dict[str, Any]:
    return {"name": "s", "kind": "random_string", **fields}


# -- the SecretZero compat file ------------------------------------------------------------------


def test_compat_secretfile_loads_its_four_secrets(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    assert [s.name for s in definition.secrets] == [
        "db_password",
        "api_key",
        "session_secret",
        "bootstrap_token",
    ]


def test_compat_target_paths_are_interpolated(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    paths = [t.config["path"] for s in definition.secrets for t in s.targets]
    assert paths == [
        "out/dev.env",
        "out/dev.json",
        "out/dev.env",
        "out/dev.yaml",
        "out/dev.tfvars",
        "out/dev.env",
    ]


def test_compat_rotation_periods_become_days(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    assert [s.rotation_days for s in definition.secrets] == [90, 30, 365, None]


def test_compat_bootstrap_token_is_one_time_and_others_are_not(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    assert {s.name: s.one_time for s in definition.secrets} == {
        "db_password": False,
        "api_key": False,
        "session_secret": False,
        "bootstrap_token": True,
    }


def test_compat_hashes_match_the_secretzero_lockfile(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    lock = json.loads((compat.parent / ".gitsecrets.lock").read_text())
    assert definition.text_hash == lock["secretfile"]["hash"]
    assert definition.variables_hash == lock["secretfile"]["variables_hash"]
    assert definition.variables_hash == "d1fcf1604ac83ff5c0f045dba8098ba8a01b10b00d1ea557e06a9c78de50dba9"


def test_compat_placements_use_the_secret_name_unless_a_key_is_set(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    assert [p.key for p in definition.secret("db_password").units[0].placements] == [
        "db_password",
        "db_password",
    ]
    assert [p.key for p in definition.secret("bootstrap_token").units[0].placements] == ["BOOTSTRAP_TOKEN"]


def test_compat_policies_and_metadata_are_parsed(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    assert definition.policies["rotation_max"].options == {"require_rotation_period": True, "max_age": "180d"}
    assert definition.policies["no_ssm"].kind == "access"
    assert definition.policies["no_ssm"].severity == "error"
    assert definition.metadata["compliance"] == ["soc2"]
    assert definition.version == "1.0"
    assert definition.warnings == ()


def test_compat_secretfile_is_valid_for_config_validate(compat: Path) -> None:
    report = validate_document(yaml.safe_load(compat.read_text()), environ={})
    assert report.valid and report.errors == []
    assert report.warnings == ["secrets[3] 'bootstrap_token': no rotation_period defined"]


# -- the model helpers -------------------------------------------------------------------------------


def test_secret_lookup_by_name_and_select(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [secret(name="a"), secret(name="b")]})
    assert definition.secret("b").name == "b"
    assert [s.name for s in definition.select(None)] == ["a", "b"]
    with pytest.raises(SecretNotDefined):
        definition.select("c")


def test_a_plain_secret_is_one_unit_named_like_the_secret(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [secret(config={"length": 8})]})
    (unit,) = definition.secret("s").units
    assert unit.lock_key == "s" and unit.generator.kind == "random_string"
    assert unit.generator.config == {"length": 8}


# -- files ----------------------------------------------------------------------------------------


def test_missing_file_is_not_found_and_named(tmp_path: Path) -> None:
    with pytest.raises(DefinitionNotFound, match="definition file not found: .*nope.yml"):
        load_definition(tmp_path / "nope.yml")


def test_a_folder_is_not_a_definition_file(tmp_path: Path) -> None:
    with pytest.raises(DefinitionNotFound):
        load_definition(tmp_path)


def test_broken_yaml_is_invalid_and_names_the_file(tmp_path: Path) -> None:
    assert load_errors(tmp_path, "secrets:\n  - name: a\n   kind: x\n")[0].startswith(
        "Secretfile.yml: invalid YAML at line 3"
    )


def test_non_utf8_file_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "Secretfile.yml"
    path.write_bytes(b"secrets: [\xff]\n")
    with pytest.raises(DefinitionInvalid, match="not valid UTF-8"):
        load_definition(path)


def test_crlf_files_hash_like_their_lf_text(tmp_path: Path) -> None:
    crlf = load(tmp_path, "version: '1'\r\nsecrets: []\r\n")
    assert crlf.text_hash == load(subfolder(tmp_path), "version: '1'\nsecrets: []\n").text_hash


def test_a_consumed_document_checks_like_a_kept_one_and_is_emptied(tmp_path: Path) -> None:
    doc = {"version": "1", "variables": {"env": "prod"},
           "secrets": [secret(name=f"s{i}", targets=[{"provider": "local", "kind": "file",
                                                      "config": {"path": "${env}.env"}}]) for i in range(3)]}
    kept = DefinitionChecker({}, strict=False).check(copy.deepcopy(doc))
    given = copy.deepcopy(doc)
    consumed = DefinitionChecker({}, strict=False).check(given, consume=True)
    assert consumed.secrets == kept.secrets and consumed.variables == kept.variables
    assert given == {}


class _Reads:
    """A file whose reads are recorded; ``grow`` is appended to the file before the first one."""

    def __init__(self, handle: Any, asked: list[int], grow: bytes) -> None:
        self.handle, self.asked, self.grow = handle, asked, grow

    def __enter__(self) -> _Reads:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def fileno(self) -> int:
        return int(self.handle.fileno())

    def read(self, size: int = -1) -> bytes:
        if self.grow:
            with open(self.handle.name, "ab") as more:
                more.write(self.grow)
            self.grow = b""
        self.asked.append(size)
        data: bytes = self.handle.read(size)
        return data


def _record_reads(monkeypatch: pytest.MonkeyPatch, grow: bytes = b"") -> list[int]:
    asked: list[int] = []
    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, mode="r", *a, **k: _Reads(real_open(self, mode), asked, grow))
    return asked


def test_a_definition_read_asks_for_the_file_size_not_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, {"version": "1", "secrets": [secret()]})
    asked = _record_reads(monkeypatch)
    assert read_text(path, source="x", max_bytes=1 << 30).startswith("version:")
    assert asked == [path.stat().st_size + 1]


def test_a_file_that_grows_while_read_is_read_whole_within_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "version: '1'\n")
    _record_reads(monkeypatch, grow=b"# " + b"x" * 100 + b"\n")
    assert read_text(path, source="x", max_bytes=1000) == "version: '1'\n# " + "x" * 100 + "\n"


def test_a_file_that_grows_past_the_limit_while_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "version: '1'\n")
    _record_reads(monkeypatch, grow=b"# " + b"x" * 2000 + b"\n")
    with pytest.raises(DefinitionInvalid, match="too large"):
        read_text(path, source="x", max_bytes=1000)


def test_load_definition_does_not_require_version_or_secrets(tmp_path: Path) -> None:
    definition = load(tmp_path, {"metadata": {"project": "x"}})
    assert definition.version is None and definition.secrets == ()


# -- structure and values ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([1, 2], "definition must be a mapping, got a list"),
        ("", "definition must be a mapping, got an empty document"),
        ({"secrets": {"a": 1}}, "secrets: must be a list"),
        ({"secrets": ["x"]}, "secrets[0]: must be a mapping"),
        ({"secrets": [{"kind": "uuid"}]}, "secrets[0].name: required"),
        ({"secrets": [{"name": 5, "kind": "uuid"}]}, "secrets[0].name: must be a string"),
        (
            {"secrets": [secret(name="a b")]},
            "secrets[0].name: 'a b' is not a valid name (letters, digits, '_', '.', '-')",
        ),
        (
            {"secrets": [secret(name="a"), secret(name="a")]},
            "secrets[1].name: duplicate secret name 'a' (first at secrets[0])",
        ),
        ({"secrets": [{"name": "a"}]}, "secrets[0].kind: required"),
        ({"secrets": [secret(kind="templates.nope")]}, "secrets[0].kind: unknown template 'nope'"),
        (
            {"secrets": [secret(rotation_period="90x")]},
            "secrets[0].rotation_period: '90x' is not a valid period",
        ),
        ({"secrets": [secret(rotation_period=90)]}, "secrets[0].rotation_period: 90 is not a valid period"),
        ({"secrets": [secret(one_time="yes")]}, "secrets[0].one_time: must be true or false"),
        ({"secrets": [secret(config=[1])]}, "secrets[0].config: must be a mapping"),
        ({"secrets": [secret(description=3)]}, "secrets[0].description: must be a string"),
        ({"secrets": [secret(targets={"provider": "local"})]}, "secrets[0].targets: must be a list"),
        ({"secrets": [secret(targets=["x"])]}, "secrets[0].targets[0]: must be a mapping"),
        ({"secrets": [secret(targets=[{"kind": "file"}])]}, "secrets[0].targets[0].provider: required"),
        ({"secrets": [secret(targets=[{"provider": "local"}])]}, "secrets[0].targets[0].kind: required"),
        (
            {"secrets": [secret(targets=[{"provider": "local", "kind": "file", "config": "p"}])]},
            "secrets[0].targets[0].config: must be a mapping",
        ),
        (
            {"secrets": [secret(config={"charset": "foo"})]},
            (
                "secrets[0].config.charset: unknown charset 'foo' "
                "(expected one of alphanumeric, alpha, numeric, hex, base64, base64url)"
            ),
        ),
        ({"secrets": [secret(config={"length": 0})]}, "secrets[0].config.length: must be greater than zero"),
        (
            {"secrets": [secret(kind="static")]},
            "secrets[0].config.value: static generator needs a value (or default)",
        ),
        ({"variables": [1]}, "variables: must be a mapping"),
        ({"providers": {"aws": {"kind": 3}}}, "providers.aws.kind: must be a string"),
        ({"providers": {"aws": {"auth": "x"}}}, "providers.aws.auth: must be a mapping"),
        (
            {"policies": {"p": {"kind": "nope"}}},
            "policies.p.kind: must be one of rotation, access, compliance",
        ),
        (
            {"policies": {"p": {"kind": "access", "severity": "fatal"}}},
            "policies.p.severity: must be one of error, warning, info",
        ),
        (
            {"policies": {"p": {"kind": "access", "enabled": "no"}}},
            "policies.p.enabled: must be true or false",
        ),
        (
            {"policies": {"p": {"kind": "rotation", "max_age": "1q"}}},
            "policies.p.max_age: '1q' is not a valid period",
        ),
        (
            {"policies": {"p": {"kind": "compliance", "standard": "pci"}}},
            "policies.p.standard: must be soc2 or iso27001",
        ),
        (
            {"policies": {"p": {"kind": "access", "denied_targets": "file"}}},
            "policies.p.denied_targets: must be a list of target kinds",
        ),
        (
            {"metadata": {"compliance": ["soc2", "hipaa"]}},
            "metadata.compliance[1]: unknown standard 'hipaa' (expected soc2 or iso27001)",
        ),
        ({"metadata": {"compliance": "soc2"}}, "metadata.compliance: must be a list"),
        ({"version": ["1"]}, "version: must be a string"),
    ],
)
def test_each_problem_is_reported_at_its_place(tmp_path: Path, doc: Any, message: str) -> None:
    assert message in load_errors(tmp_path, doc)


def test_unknown_kind_lists_generators_and_templates(tmp_path: Path) -> None:
    (error,) = load_errors(tmp_path, {"secrets": [secret(kind="nope")]})
    assert error.startswith("secrets[0].kind: unknown kind 'nope' (expected one of random_password,")
    assert error.endswith("or templates.<name>)")


def test_all_problems_are_reported_together(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, {"secrets": [secret(name="a b"), secret(rotation_period="x")]})
    assert len(errors) == 2


def test_yaml_only_values_like_sets_are_refused(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, "secrets:\n  - name: a\n    kind: uuid\n    config: !!set {x}\n")
    assert "secrets[0].config: unsupported value of type set" in errors


def test_non_string_keys_are_refused(tmp_path: Path) -> None:
    assert "variables: keys must be strings" in load_errors(tmp_path, "variables:\n  1: a\n  b: c\n")


def test_lowercased_compliance_standards(tmp_path: Path) -> None:
    definition = load(
        tmp_path,
        {
            "metadata": {"compliance": ["SOC2", "Iso27001"]},
            "policies": {"c": {"kind": "compliance", "standard": "ISO27001"}},
        },
    )
    assert definition.metadata["compliance"] == ["soc2", "iso27001"]
    assert definition.policies["c"].options == {"standard": "iso27001"}


def test_policy_defaults_are_error_severity_and_enabled(tmp_path: Path) -> None:
    policy = load(tmp_path, {"policies": {"p": {"kind": "access", "allowed_targets": ["file"]}}}).policies[
        "p"
    ]
    assert (policy.severity, policy.enabled, policy.options) == ("error", True, {"allowed_targets": ["file"]})


def test_provider_kind_defaults_to_its_alias(tmp_path: Path) -> None:
    definition = load(tmp_path, {"providers": {"aws": {"auth": {"kind": "env"}}, "prod": {"kind": "vault"}}})
    assert definition.providers["aws"].kind == "aws" and definition.providers["aws"].auth == {"kind": "env"}
    assert definition.providers["prod"].kind == "vault" and definition.providers["prod"].config == {}


# -- warnings ----------------------------------------------------------------------------------------


def test_unknown_top_level_keys_are_warnings(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [], "extras": {"a": 1}})
    assert definition.warnings == ("unknown top-level key 'extras' (kept, not used)",)


def test_unknown_secret_keys_are_warnings(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [secret(vault="x")]})
    assert "secrets[0]: unknown key 'vault' (ignored)" in definition.warnings


def test_unknown_generator_options_are_warnings(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [secret(config={"prompt_on_empty": False})]})
    assert (
        "secrets[0].config: unknown option 'prompt_on_empty' for random_string (ignored)"
        in definition.warnings
    )


# -- templates ----------------------------------------------------------------------------------


TEMPLATED = {
    "templates": {
        "db": {
            "description": "database credentials",
            "fields": {
                "username": {
                    "generator": {"kind": "static", "config": {"value": "app"}},
                    "targets": [
                        {
                            "provider": "local",
                            "kind": "file",
                            "config": {"path": "user.env", "key": "DB_USER"},
                        }
                    ],
                },
                "password": {"generator": {"kind": "random_password", "config": {"length": 20}}},
            },
            "targets": [{"provider": "local", "kind": "file", "config": {"path": "shared.env"}}],
        }
    },
    "secrets": [
        {
            "name": "main_db",
            "kind": "templates.db",
            "rotation_period": "30d",
            "targets": [{"provider": "local", "kind": "file", "config": {"path": "own.json"}}],
        }
    ],
}


def test_template_secret_has_one_unit_per_field(tmp_path: Path) -> None:
    main = load(tmp_path, TEMPLATED).secret("main_db")
    assert main.template == "db"
    assert [u.lock_key for u in main.units] == ["main_db.username", "main_db.password"]
    assert main.units[1].generator.kind == "random_password"


def test_template_placements_are_field_then_template_then_secret_targets(tmp_path: Path) -> None:
    main = load(tmp_path, TEMPLATED).secret("main_db")
    username, password = main.units
    assert [(p.target.config["path"], p.key) for p in username.placements] == [
        ("user.env", "DB_USER"),
        ("shared.env", "username"),
        ("own.json", "username"),
    ]
    assert [(p.target.config["path"], p.key) for p in password.placements] == [
        ("shared.env", "password"),
        ("own.json", "password"),
    ]


def test_template_field_generators_are_checked(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(TEMPLATED))
    doc["templates"]["db"]["fields"]["password"]["generator"]["config"]["length"] = "x"
    assert "templates.db.fields.password.generator.config.length: must be an integer" in load_errors(
        tmp_path, doc
    )


def test_template_without_fields_is_an_error(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, {"templates": {"t": {"fields": {}}}})
    assert errors == ["templates.t.fields: a template needs at least one field"]


def test_lock_keys_must_not_collide(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(TEMPLATED))
    doc["secrets"].append(secret(name="main_db.password"))
    assert "secrets[1]: its lockfile key 'main_db.password' is also used by secrets[0]" in load_errors(
        tmp_path, doc
    )


# -- definition hash ----------------------------------------------------------------------------


def test_definition_hash_ignores_mapping_order(tmp_path: Path) -> None:
    one = load(tmp_path, {"secrets": [secret(config={"length": 8, "charset": "hex"})]})
    two = load(
        subfolder(tmp_path),
        {"secrets": [{"config": {"charset": "hex", "length": 8}, "kind": "random_string", "name": "s"}]},
    )
    assert one.secret("s").definition_hash == two.secret("s").definition_hash


def test_definition_hash_changes_with_the_generator_config(tmp_path: Path) -> None:
    one = load(tmp_path, {"secrets": [secret(config={"length": 8})]}).secret("s").definition_hash
    two = load(tmp_path, {"secrets": [secret(config={"length": 9})]}).secret("s").definition_hash
    assert one != two


def test_definition_hash_changes_with_an_interpolated_target(tmp_path: Path) -> None:
    doc = {
        "variables": {"env": "dev"},
        "secrets": [
            secret(targets=[{"provider": "local", "kind": "file", "config": {"path": "{{ var.env }}.env"}}])
        ],
    }
    dev = load(tmp_path, doc).secret("s").definition_hash
    prod = load(tmp_path, doc, variables={"env": "prod"}).secret("s").definition_hash
    assert dev != prod


def test_definition_hash_ignores_the_description(tmp_path: Path) -> None:
    one = load(tmp_path, {"secrets": [secret(description="a")]}).secret("s").definition_hash
    two = load(tmp_path, {"secrets": [secret(description="b")]}).secret("s").definition_hash
    assert one == two


def test_definition_hash_of_a_template_secret_covers_its_fields(tmp_path: Path) -> None:
    before = load(tmp_path, TEMPLATED).secret("main_db").definition_hash
    doc = json.loads(json.dumps(TEMPLATED))
    doc["templates"]["db"]["fields"]["password"]["generator"]["config"]["length"] = 21
    assert load(tmp_path, doc).secret("main_db").definition_hash != before


# -- interpolation in definitions -----------------------------------------------------------------


def test_single_expression_config_values_keep_their_type(tmp_path: Path) -> None:
    definition = load(
        tmp_path, {"variables": {"len": 16}, "secrets": [secret(config={"length": "{{ var.len }}"})]}
    )
    assert definition.secret("s").config == {"length": 16}


def test_environment_values_fill_dollar_names(tmp_path: Path) -> None:
    doc = {
        "secrets": [
            secret(
                targets=[{"provider": "local", "kind": "file", "config": {"path": "${OUT}/${NAME:-x}.env"}}]
            )
        ]
    }
    definition = load(tmp_path, doc, environ={"OUT": "/srv"})
    assert definition.secret("s").targets[0].config["path"] == "/srv/x.env"


def test_undefined_variable_names_the_place(tmp_path: Path) -> None:
    doc = {
        "secrets": [
            secret(
                targets=[
                    {"provider": "local", "kind": "file", "config": {"path": "a"}},
                    {"provider": "local", "kind": "file", "config": {"path": "{{ var.env }}"}},
                ]
            )
        ]
    }
    assert load_errors(tmp_path, doc) == ["secrets[0].targets[1].config.path: undefined variable 'env'"]


def test_variable_cycles_are_errors(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, {"variables": {"a": "{{ var.b }}", "b": "{{ var.a }}"}})
    assert errors == ["variables.a: variable cycle a -> b -> a"]


def test_resolved_variables_are_exposed(tmp_path: Path) -> None:
    definition = load(tmp_path, {"variables": {"app": "shop", "full": "{{ var.app }}-x"}})
    assert definition.variables == {"app": "shop", "full": "shop-x"}


def test_unknown_top_level_sections_are_not_interpolated(tmp_path: Path) -> None:
    definition = load(tmp_path, {"extras": "{{ var.nope }}"})  # an undefined variable would raise
    assert definition.warnings == ("unknown top-level key 'extras' (kept, not used)",)


def test_interpolated_values_are_not_echoed_by_validation() -> None:
    report = validate_document(
        {"version": "1", "secrets": [secret(rotation_period="${LEAKY}")]}, environ={"LEAKY": "hunter2secret"}
    )
    assert report.errors == ["secrets[0].rotation_period: the interpolated value is not a valid period"]


# -- variable files -------------------------------------------------------------------------------


def test_var_files_merge_over_variables_in_order_then_the_variables_argument(tmp_path: Path) -> None:
    (tmp_path / "a.szvar").write_text("env: a\nregion: eu\ndb: {host: a, port: 1}\n")
    (tmp_path / "b.szvar").write_text("env: b\ndb: {port: 2}\n")
    doc = {"variables": {"env": "base", "app": "shop", "db": {"host": "base"}}}
    definition = load(tmp_path, doc, var_files=["a.szvar", "b.szvar"], variables={"region": "us"})
    assert definition.variables == {"env": "b", "app": "shop", "db": {"host": "a", "port": 2}, "region": "us"}
    assert definition.var_files == ("a.szvar", "b.szvar")


def test_var_file_escaping_the_folder_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (tmp_path / "x.szvar").write_text("a: 1\n")
    with pytest.raises(VarFileInvalid):
        load(project, {"secrets": []}, var_files=["../x.szvar"])


def test_missing_var_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(VarFileNotFound):
        load(tmp_path, {"secrets": []}, var_files=["nope.szvar"])


# -- cache --------------------------------------------------------------------------------------


def test_unchanged_file_returns_the_cached_object(compat: Path) -> None:
    assert load_definition(compat, environ={}) is load_definition(compat, environ={})


def test_a_changed_file_is_parsed_again(tmp_path: Path) -> None:
    path = write(tmp_path, {"secrets": [secret(name="a")]})
    first = load_definition(path, environ={})
    write(tmp_path, {"secrets": [secret(name="bb")]})
    second = load_definition(path, environ={})
    assert second is not first and second.secrets[0].name == "bb"


def test_a_touched_file_with_the_same_size_is_parsed_again(tmp_path: Path) -> None:
    path = write(tmp_path, {"secrets": [secret(name="a")]})
    first = load_definition(path, environ={})
    write(tmp_path, {"secrets": [secret(name="b")]})
    os.utime(path, ns=(1, 1))  # force a different mtime even on coarse clocks
    assert load_definition(path, environ={}).secrets[0].name == "b" and first.secrets[0].name == "a"


def test_a_changed_var_file_invalidates_the_cache(tmp_path: Path) -> None:
    (tmp_path / "v.szvar").write_text("env: a\n")
    path = write(tmp_path, {"secrets": []})
    first = load_definition(path, var_files=["v.szvar"], environ={})
    (tmp_path / "v.szvar").write_text("env: bb\n")
    second = load_definition(path, var_files=["v.szvar"], environ={})
    assert second is not first and second.variables == {"env": "bb"}


def test_different_variables_or_environment_are_cached_apart(compat: Path) -> None:
    base = load_definition(compat, environ={})
    assert load_definition(compat, environ={}, variables={"env": "prod"}) is not base
    assert load_definition(compat, environ={"X": "1"}) is not base
    assert (
        load_definition(compat, environ={}, variables={"env": "prod"}).secrets[0].targets[0].config["path"]
        == "out/prod.env"
    )


def test_the_cache_is_bounded(tmp_path: Path) -> None:
    path = write(tmp_path, {"secrets": []})
    first = load_definition(path, environ={})
    for index in range(40):
        load_definition(path, environ={"N": str(index)})
    assert load_definition(path, environ={}) is not first


# -- POST /config/validate -----------------------------------------------------------------------


def test_validate_requires_version() -> None:
    assert validate_document({"secrets": []}, environ={}).errors == ["Missing required field: version"]


def test_validate_requires_secrets() -> None:
    assert validate_document({"version": "1.0"}, environ={}).errors == ["Missing required field: secrets"]


def test_validate_warns_about_secrets_without_rotation_period() -> None:
    report = validate_document({"version": "1", "secrets": [{"name": "api_key", "kind": "uuid"}]}, environ={})
    assert report.valid
    assert report.warnings == ["secrets[0] 'api_key': no rotation_period defined"]


def test_validate_reports_the_same_problems_as_the_loader() -> None:
    report = validate_document({"version": "1", "secrets": [secret(rotation_period="90x")]}, environ={})
    assert not report.valid and report.errors == ["secrets[0].rotation_period: '90x' is not a valid period"]


@pytest.mark.parametrize(
    "doc",
    [
        None,
        "text",
        3,
        [1],
        {"secrets": None},
        {"secrets": [None, 1, []]},
        {"version": {"a": 1}, "secrets": [{"name": ["x"], "kind": {"y": 1}}]},
        {"templates": {"t": {"fields": {"f": {"generator": "x"}}}}, "secrets": "s"},
        {"policies": {"p": {"kind": "compliance", "standard": ["soc2"]}}},
        {"metadata": {"compliance": [["x"]]}},
    ],
)
def test_validate_never_raises_for_bad_input(doc: Any) -> None:
    report = validate_document(doc, environ={})
    assert not report.valid and report.errors
    assert "definition could not be checked" not in report.errors
