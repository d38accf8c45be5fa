"""Validation of local target paths against the allowed target roots (SERVICE_TARGET_ROOTS)."""

from __future__ import annotations

from pathlib import Path

from secretsapi.service.validate import validate_document, validate_file
from tests.factories import definition, file_secret, write_definition

OUTSIDE = "path /srv/app/.env is outside the allowed target roots (SERVICE_TARGET_ROOTS)"


def test_a_file_with_an_absolute_path_outside_its_folder_is_invalid_naming_secret_and_target(
        tmp_path: Path) -> None:
    path = write_definition(tmp_path, definition(file_secret("db", "/srv/app/.env")))
    report = validate_file(path)
    assert report.valid is False
    assert report.errors == [f"secret 'db' target local/file config.path: {OUTSIDE}"]


def test_a_file_with_an_absolute_path_inside_a_configured_root_is_valid(tmp_path: Path) -> None:
    path = write_definition(tmp_path, definition(file_secret("db", "/srv/app/.env")))
    assert validate_file(path, target_roots=(Path("/srv/app"),)).errors == []


def test_a_path_made_absolute_by_a_variable_is_checked_after_interpolation(tmp_path: Path) -> None:
    doc = definition(file_secret("db", "{{ var.dir }}/.env"), variables={"dir": "/srv/app"})
    path = write_definition(tmp_path, doc)
    assert validate_file(path).errors == [f"secret 'db' target local/file config.path: {OUTSIDE}"]
    assert validate_file(path, target_roots=(Path("/srv"),)).errors == []


def test_a_relative_path_leaving_the_folder_is_invalid_by_default(tmp_path: Path) -> None:
    path = write_definition(tmp_path, definition(file_secret("db", "../x.env")))
    assert validate_file(path).errors == [
        "secret 'db' target local/file config.path: path ../x.env is outside the allowed target roots "
        "(SERVICE_TARGET_ROOTS)"]
    assert validate_file(path, target_roots=(tmp_path.parent,)).errors == []


def test_a_submitted_document_without_roots_is_checked_for_shape_only() -> None:
    doc = definition(file_secret("db", "/srv/app/.env"), file_secret("up", "../x.env"))
    assert validate_document(doc).errors == []


def test_a_submitted_document_checks_absolute_paths_against_the_configured_roots() -> None:
    doc = definition(file_secret("db", "/srv/app/.env"), file_secret("ok", "/etc/app/.env"),
                     file_secret("rel", "../x.env"))
    report = validate_document(doc, target_roots=(Path("/etc/app"),))
    assert report.errors == [f"secret 'db' target local/file config.path: {OUTSIDE}"]


def test_template_paths_are_checked_too(tmp_path: Path) -> None:
    target = {"provider": "local", "kind": "template",
              "config": {"template_path": "t.j2", "output_path": "/srv/app/.env"}}
    doc = definition({"name": "db", "kind": "random_password", "targets": [target]})
    assert validate_file(write_definition(tmp_path, doc)).errors == [
        f"secret 'db' target local/template config.output_path: {OUTSIDE}"]
