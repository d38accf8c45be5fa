"""The generator table of docs/definitions.md is the generators' own options, and the example of
every provider-backed kind validates with no kind reported unsupported."""

from __future__ import annotations

from pathlib import Path

from secretsapi.service.generators.tables import generated
from secretsapi.service.validate import validate_file

ROOT = Path(__file__).resolve().parents[3]


def test_the_docs_generator_table_is_the_generators_options() -> None:
    text = (ROOT / "docs" / "definitions.md").read_text()
    assert generated(text) == text, "run: python -m secretsapi.service.generators.tables, and paste its table"


def test_the_provider_tokens_example_uses_every_token_kind_and_validates_without_warnings() -> None:
    report = validate_file(ROOT / "examples" / "provider-tokens.yml")
    assert report.valid and report.errors == [] and report.warnings == []
    text = (ROOT / "examples" / "provider-tokens.yml").read_text()
    for kind in ("gitlab_project_token", "gitlab_group_token", "gitlab_group_service_account", "azdo_pat",
                 "github_pat"):
        assert f"kind: {kind}\n" in text
