"""Units: the lockfile units and placements that secrets and templates become, and their definition hashes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.factories import bare_secret as secret
from tests.factories import load_document as load
from tests.factories import load_errors, subfolder

# -- plain secrets ------------------------------------------------------------------------------


def test_a_plain_secret_is_one_unit_named_like_the_secret(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [secret(config={"length": 8})]})
    (unit,) = definition.secret("s").units
    assert unit.lock_key == "s"
    assert unit.generator.kind == "random_string"
    assert unit.generator.config == {"length": 8}


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
