"""The one-pass loader gives exactly what PyYAML's safe loader gives, or hands the text over."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from secretsapi.service.definition import yaml_loader
from secretsapi.service.definition.yaml_events import LimitExceeded, Loader, Unsupported
from secretsapi.service.errors import DefinitionInvalid
from tests.factories import COMPAT

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

SAME_AS_PYYAML = {
    "scalars of every implicit type": (
        "s: text\nq: 'quoted 1'\nd: \"2\"\ni: 42\nh: 0x1f\no: 0o17\nneg: -3\nf: 1.5\ne: 6.02e+23\n"
        "nan_is_skipped: x\nb1: true\nb2: no\nb3: On\nn1: ~\nn2: null\nn3:\ndate: 2024-01-02\n"
        "t: 2024-01-02T10:00:00Z\nempty_q: ''\n"
    ),
    "nested flow and block collections": "a: [1, {b: [x, y]}, []]\nc:\n  - d: {}\n    e: [f]\n  - - g\n",
    "anchors and aliases share values": "base: &b {x: 1, y: [2]}\none: *b\ntwo: [*b, *b]\nscalar: &s v\nref: *s\n",
    "merge keys, own keys win": "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n  z: 4\n",
    "merge key after own keys": "base: &b {x: 1, y: 2}\nm:\n  y: 3\n  <<: *b\n",
    "a list of merges, first wins": "a: &a {k: a, only_a: 1}\nb: &b {k: b, only_b: 2}\nm: {<<: [*a, *b]}\n",
    "merged mapping that merges itself": "a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nm: {<<: *b, z: 3}\n",
    "quoted merge-looking key is a plain key": "'<<': literal\n",
    "equals key": "=: value\n",
    "duplicate keys: the last wins": "a: 1\na: 2\n",
    "typed keys": "1: one\ntrue: yes\n~: none\n",
    "core explicit tags": (
        "a: !!str 3\nb: !!int '7'\nc: !!float '1'\nd: !!bool 'yes'\ne: !!null ''\nf: !!map {x: 1}\ng: !!seq [1]\n"
    ),
    "non-specific tag": "a: ! 12\n",
    "block scalars": "lit: |\n  line 1\n  line 2\nfold: >\n  a\n  b\n",
    "a scalar document": "just text\n",
    "a sequence document": "- 1\n- two\n",
    "unicode": "name: caf\u00e9 \u2603\n",
}


def _pyyaml(text: str) -> Any:
    # The service's own bounded safe loader (a SafeLoader subclass), the reference for the stream.
    return yaml.load(text, Loader=yaml_loader._BoundedCLoader)  # noqa: S506


def _stream(text: str) -> Any:
    return Loader(yaml_loader._BoundedCLoader, max_aliases=10_000, max_expansion=1_000_000, max_depth=1_000).load(text)


@pytest.mark.parametrize("text", list(SAME_AS_PYYAML.values()), ids=list(SAME_AS_PYYAML))
def test_the_stream_loader_builds_what_pyyaml_builds(text: str) -> None:
    expected = _pyyaml(text)
    got = _stream(text)
    assert got == expected
    assert repr(got) == repr(expected)  # same key order, same int/float/bool types


def test_the_stream_loader_shares_aliased_values_as_pyyaml_does() -> None:
    doc = _stream("base: &b {x: 1}\none: *b\ntwo: *b\n")
    assert doc["one"] is doc["two"] is doc["base"]


@pytest.mark.parametrize("path", [*sorted(COMPAT.glob("*.yml")), *sorted(EXAMPLES.glob("*.yml"))],
                         ids=lambda p: p.name)
def test_real_definitions_load_the_same_both_ways(path: Path) -> None:
    text = path.read_text()
    assert _stream(text) == _pyyaml(text)


HANDED_OVER = {
    "an application tag": "a: !custom x\n",
    "a binary tag": "a: !!binary aGk=\n",
    "a set": "a: !!set {x}\n",
    "a mapping as a key": "? {a: 1}\n: v\n",
    "an undefined alias": "a: *nowhere\n",
    "a recursive alias": "&a [*a]\n",
    "a duplicate anchor": "a: &x 1\nb: &x 2\n",
    "a second document": "a: 1\n---\nb: 2\n",
    "a syntax error": "a: b\nc: d\n  e: f\n",
    "a merge of a scalar": "m: {<<: 1}\n",
    "a malformed typed scalar": "a: !!int x\n",
    "deep nesting": "[" * 1_001 + "]" * 1_001 + "\n",
}


@pytest.mark.parametrize("text", list(HANDED_OVER.values()), ids=list(HANDED_OVER))
def test_what_the_stream_loader_does_not_cover_is_handed_to_the_general_loader(text: str) -> None:
    with pytest.raises(Unsupported):
        _stream(text)


def test_alias_uses_are_counted_as_they_arrive() -> None:
    loader = Loader(yaml_loader._BoundedCLoader, max_aliases=3, max_expansion=1_000, max_depth=10)
    assert loader.load("a: &x 1\nb: [*x, *x, *x]\n") == {"a": 1, "b": [1, 1, 1]}
    with pytest.raises(LimitExceeded, match="too many alias uses"):
        loader.load("a: &x 1\nb: [*x, *x, *x, *x]\n")


def test_expansion_counts_only_the_nodes_aliases_add() -> None:
    loader = Loader(yaml_loader._BoundedCLoader, max_aliases=100, max_expansion=6, max_depth=10)
    # [x, y] is 3 nodes; two aliases of it add 6.
    assert loader.load("a: &l [x, y]\nb: *l\nc: *l\n")["c"] == ["x", "y"]
    with pytest.raises(LimitExceeded, match="aliases expand to more than 6 nodes"):
        loader.load("a: &l [x, y]\nb: *l\nc: *l\nd: *l\n")


@pytest.mark.thorough
def test_a_large_honest_definition_is_within_every_bound() -> None:
    # 40,000 secrets: more nodes than the alias-expansion bound, and no alias at all.
    rows = "".join(f"- {{name: s{i}, kind: random_password, config: {{length: 24}}}}\n" for i in range(40_000))
    doc = yaml_loader.load_yaml("secrets:\n" + rows, source="big.yml")
    assert len(doc["secrets"]) == 40_000


@pytest.mark.thorough
def test_a_large_document_with_a_syntax_error_is_refused_without_the_slow_parser() -> None:
    # Past PURE_PYTHON_MAX_CHARS the error comes from libyaml, with its position.
    text = "a: b\n" + "k: v\n" * 300_000 + "  e: f\n"
    with pytest.raises(DefinitionInvalid) as caught:
        yaml_loader.load_yaml(text, source="big.yml")
    assert caught.value.errors[0].startswith("big.yml: invalid YAML at line 300002")
