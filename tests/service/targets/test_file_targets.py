"""local/file targets: SecretZero's files, in-place edits, exact round-trips and confinement."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets import ReadBack, TargetContext, TargetKind, get_kind, kinds
from secretsapi.service.targets.files import LocalFileKind
from secretsapi.service.targets.formats import FORMATS, infer_format
from secretsapi.service.targets.formats.dotenv import load_secretzero
from secretsapi.service.targets.paths import lexical_key
from secretsapi.service.util.hashing import sha256_text
from tests.asserts import recorded_atomic_writes
from tests.factories import COMPAT

KIND = get_kind("local/file")

NASTY = [
    "it's",
    'say "hi"',
    "$HOME and ${X} and $(id) and `id`",
    "back\\slash \\n \\",
    "line1\nline2\n",
    "tab\there",
    "# not a comment",
    "a=b=c",
    "  leading and trailing  ",
    "é 日本 😀",
    "",
    "mixed 'single' \"double\" \\ $ # = \t \r\n end",
    "%{ if x }${y}$${z}%%{w}",
    "ends with backslash\\",
    "]=}c_eeR~8R+1CO>szs<Lll_",
]
EXTENSIONS = {"dotenv": "env", "json": "json", "yaml": "yaml", "toml": "toml", "tfvars": "tfvars"}
EXISTING = {
    "dotenv": "# header\nexport OTHER=keep # note\n\nLAST='x y'\n",
    "json": '{"other": "keep", "nested": {"a": [1, 2]}}',
    "yaml": "# header\nother: keep  # note\nnested:\n  a: [1, 2]\n",
    "toml": '# header\nother = "keep" # note\n\n[table]\na = 1\n',
    "tfvars": '# header\nother = "keep" # note\nlist = [\n  "a",\n  "b",\n]\n',
}


@pytest.fixture
def ctx(tmp_path: Path) -> TargetContext:
    return TargetContext(base_dir=tmp_path, providers={}, value_of=lambda key: None, lock_keys=())


@pytest.fixture
def compat(tmp_path: Path) -> TargetContext:
    shutil.copytree(COMPAT, tmp_path / "project")
    for path in (tmp_path / "project").rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)  # the shared copy is read-only
    (tmp_path / "project").chmod(0o700)
    return TargetContext(base_dir=tmp_path / "project", providers={},
                         value_of=lambda key: None, lock_keys=())


def place(path: str, key: str, **config: Any) -> Placement:
    return Placement(TargetSpec("local", "file", {"path": path, **config}), key)


def write(ctx: TargetContext, path: str, values: dict[str, str], **config: Any) -> dict[str, str]:
    return KIND.write([(place(path, k, **config), v) for k, v in values.items()], ctx)


def read(ctx: TargetContext, path: str, *keys: str, **config: Any) -> dict[str, ReadBack]:
    return KIND.read([place(path, k, **config) for k in keys], ctx)


# --- SecretZero's files --------------------------------------------------------------------

def test_every_compat_file_reads_back_the_hashes_of_the_compat_lockfile(
        compat: TargetContext) -> None:
    lock = json.loads((compat.base_dir / ".gitsecrets.lock").read_text())
    keys = {"bootstrap_token": "BOOTSTRAP_TOKEN"}
    checked = 0
    for name, entry in lock["secrets"].items():
        for target_id, recorded in entry["targets"].items():
            path = target_id.removeprefix("local/file/")
            placement = place(path, keys.get(name, name))
            assert KIND.target_id(placement.target, compat) == target_id
            back = KIND.read([placement], compat)[placement.key]
            assert (back.present, back.hash, back.location) == (True, recorded, path)
            checked += 1
    assert checked == 6


def test_rewriting_one_compat_dotenv_key_keeps_the_other_lines(compat: TargetContext) -> None:
    path = compat.base_dir / "out/dev.env"
    lines = path.read_text().splitlines()
    write(compat, "out/dev.env", {"api_key": "new value"})
    assert path.read_text().splitlines() == [lines[0], "api_key='new value'", lines[2]]


def test_rewriting_the_compat_tfvars_key_keeps_the_comment(compat: TargetContext) -> None:
    path = compat.base_dir / "out/dev.tfvars"
    comment = path.read_text().splitlines()[0]
    write(compat, "out/dev.tfvars", {"session_secret": "rotated"})
    assert path.read_text() == f'{comment}\nsession_secret = "rotated"\n'


def test_rewriting_the_compat_json_and_yaml_keeps_their_keys(compat: TargetContext) -> None:
    write(compat, "out/dev.json", {"extra": "x"})
    write(compat, "out/dev.yaml", {"extra": "x"})
    assert json.loads((compat.base_dir / "out/dev.json").read_text()) == {
        "db_password": "]=}c_eeR~8R+1CO>szs<Lll_", "extra": "x"}
    assert (compat.base_dir / "out/dev.yaml").read_text() == (
        "api_key: 5ac54e6ffbf5eefec3cd6121aecaeaaebe2480bc\nextra: x\n")


# --- exact round-trips ---------------------------------------------------------------------

@pytest.mark.parametrize("value", NASTY, ids=range(len(NASTY)))
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_nasty_value_round_trips_through_a_new_file(
        ctx: TargetContext, fmt: str, value: str) -> None:
    path = f"out/new.{EXTENSIONS[fmt]}"
    recorded = write(ctx, path, {"secret_key": value})
    assert recorded == {"secret_key": sha256_text(value)}
    assert FORMATS[fmt].load((ctx.base_dir / path).read_text())["secret_key"] == value
    assert read(ctx, path, "secret_key")["secret_key"].hash == sha256_text(value)


@pytest.mark.parametrize("value", NASTY, ids=range(len(NASTY)))
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_nasty_value_round_trips_through_an_existing_file_keeping_other_keys(
        ctx: TargetContext, fmt: str, value: str) -> None:
    path = ctx.base_dir / f"app.{EXTENSIONS[fmt]}"
    path.write_text(EXISTING[fmt])
    before = FORMATS[fmt].load(EXISTING[fmt])
    write(ctx, path.name, {"secret_key": "first"})
    write(ctx, path.name, {"secret_key": value})  # replace in place, not append
    after = FORMATS[fmt].load(path.read_text())
    assert after.pop("secret_key") == value
    assert after == before
    assert "# header" in path.read_text() or fmt == "json"


def test_dotenv_single_quotes_dollar_and_backtick_when_the_value_has_no_single_quote(
        ctx: TargetContext) -> None:
    write(ctx, "a.env", {"K": "$HOME `id`"})
    assert (ctx.base_dir / "a.env").read_text() == "K='$HOME `id`'\n"


def test_dotenv_escapes_dollar_and_backtick_when_no_literal_form_exists(ctx: TargetContext) -> None:
    write(ctx, "a.env", {"K": "it's $HOME `id`"})
    assert (ctx.base_dir / "a.env").read_text() == 'K="it\'s \\$HOME \\`id\\`"\n'


def test_dotenv_writes_simple_values_bare(ctx: TargetContext) -> None:
    write(ctx, "a.env", {"K": "abc-DEF_1.2/3:4@5+6,7=8"})
    assert (ctx.base_dir / "a.env").read_text() == "K=abc-DEF_1.2/3:4@5+6,7=8\n"


def test_dotenv_reads_every_quoting_style(ctx: TargetContext) -> None:
    (ctx.base_dir / "a.env").write_text(
        "# comment\n"
        "BARE=plain value # trailing comment\n"
        "export EXPORTED=yes\n"
        "SINGLE='literal $X \\n # not comment'\n"
        'DOUBLE="esc \\" \\\\ \\n \\t \\$ end" # comment\n'
        'MULTI="first\nsecond"\n'
        "HASH=a#b\n"
        "EMPTY=\n"
        "SPACED = spaced\n"
        "QUOTE_START='abc\n"
        'ODD="ab"cd\n'
    )
    assert FORMATS["dotenv"].load((ctx.base_dir / "a.env").read_text()) == {
        "BARE": "plain value", "EXPORTED": "yes", "SINGLE": "literal $X \\n # not comment",
        "DOUBLE": 'esc " \\ \n \t $ end', "MULTI": "first\nsecond", "HASH": "a#b",
        "EMPTY": "", "SPACED": "spaced", "QUOTE_START": "'abc", "ODD": '"ab"cd',
    }



def test_dotenv_reads_a_double_quote_left_open_or_escaped_to_the_end_as_a_bare_value() -> None:
    text = ('OPEN="abc\n'  # no closing quote anywhere: read bare
            'OK="a\\"b" # the escaped quote does not close it\n'
            'ESCAPED="abc\\"\n'  # its only quote after the first is escaped
            'TRAIL="abc\\')  # a backslash as the file's last character
    assert FORMATS["dotenv"].load(text) == {
        "OPEN": '"abc', "OK": 'a"b', "ESCAPED": '"abc\\"', "TRAIL": '"abc\\'}

def test_dotenv_rewrite_keeps_comments_blank_lines_and_export_prefix(ctx: TargetContext) -> None:
    path = ctx.base_dir / "a.env"
    path.write_text("# top\n\nexport A=old # why\nB='b'\n\n# end\n")
    write(ctx, "a.env", {"A": "new", "C": "c"})
    assert path.read_text() == "# top\n\nexport A=new # why\nB='b'\n\n# end\nC=c\n"


def test_dotenv_rewrite_replaces_a_multiline_value_and_drops_duplicates(ctx: TargetContext) -> None:
    path = ctx.base_dir / "a.env"
    path.write_text('A="old\nvalue"\nB=b\nA=older\n')
    write(ctx, "a.env", {"A": "new"})
    assert path.read_text() == "A=new\nB=b\n"


def test_dotenv_keeps_crlf_line_endings(ctx: TargetContext) -> None:
    path = ctx.base_dir / "a.env"
    path.write_bytes(b"A=a\r\nB=b\r\n")
    write(ctx, "a.env", {"A": "x", "C": "c"})
    assert path.read_bytes() == b"A=x\r\nB=b\r\nC=c\r\n"


def test_yaml_in_place_edit_keeps_comments(ctx: TargetContext) -> None:
    path = ctx.base_dir / "a.yaml"
    path.write_text("# top\nkey: old  # why\nother: 1\n")
    write(ctx, "a.yaml", {"key": "true"})
    assert path.read_text() == "# top\nkey: \"true\"  # why\nother: 1\n"


def test_yaml_with_an_alias_is_redumped_with_the_right_values(ctx: TargetContext) -> None:
    path = ctx.base_dir / "a.yaml"
    path.write_text("base: &b old\ncopy: *b\n")
    write(ctx, "a.yaml", {"copy": "new"})
    assert FORMATS["yaml"].load(path.read_text()) == {"base": "old", "copy": "new"}


def test_toml_rewrite_keeps_comments_and_tables(ctx: TargetContext) -> None:
    path = ctx.base_dir / "a.toml"
    path.write_text('# top\nkey = "old" # why\n\n[server]\nport = 8080\n')
    write(ctx, "a.toml", {"key": "new", "added": "x"})
    text = path.read_text()
    assert text.startswith('# top\nkey = "new" # why\n')
    assert FORMATS["toml"].load(text) == {"key": "new", "added": "x", "server": {"port": 8080}}


def test_tfvars_rewrite_keeps_trailing_comments_and_other_expressions(ctx: TargetContext) -> None:
    path = ctx.base_dir / "a.tfvars"
    path.write_text('/* block */\nregion = "eu" // where\nzones = [\n  "a",\n]\n'
                    'doc = <<-EOT\n  hello\n  EOT\ncount = 3\n')
    write(ctx, "a.tfvars", {"region": "us"})
    assert path.read_text() == ('/* block */\nregion = "us" // where\nzones = [\n  "a",\n]\n'
                                'doc = <<-EOT\n  hello\n  EOT\ncount = 3\n')
    loaded = FORMATS["tfvars"].load(path.read_text())
    assert loaded["doc"] == "hello\n" and loaded["count"] == "3"


def test_tfvars_escapes_interpolation_sequences(ctx: TargetContext) -> None:
    write(ctx, "a.tfvars", {"v": "${x} %{y}"})
    assert (ctx.base_dir / "a.tfvars").read_text() == 'v = "$${x} %%{y}"\n'


# --- reading -------------------------------------------------------------------------------

def test_read_of_a_missing_file_reports_every_key_absent(ctx: TargetContext) -> None:
    assert read(ctx, "none.env", "A", "B") == {
        "A": ReadBack(False, None, "none.env"), "B": ReadBack(False, None, "none.env")}


def test_read_of_a_missing_key_reports_it_absent(ctx: TargetContext) -> None:
    write(ctx, "a.json", {"A": "x"})
    back = read(ctx, "a.json", "A", "B")
    assert back["A"].present and not back["B"].present


def test_read_hashes_non_string_values_as_the_lockfile_does(ctx: TargetContext) -> None:
    (ctx.base_dir / "a.json").write_text('{"n": 123}')
    assert read(ctx, "a.json", "n")["n"].hash == sha256_text("123")


@pytest.mark.parametrize(("name", "text"), [
    ("a.env", "hunter2 hunter2\n"),
    ("a.json", '{"k": "hunter2"'),
    ("a.yaml", "k: [hunter2\n"),
    ("a.toml", 'k = "hunter2\n'),
    ("a.tfvars", 'k = "hunter2\n'),
    ("a.tfvars", 'k = [ "hunter2"\n'),
    ("a.yaml", "- hunter2\n"),
])
def test_unparseable_file_raises_target_error_without_its_content(
        ctx: TargetContext, name: str, text: str) -> None:
    (ctx.base_dir / name).write_text(text)
    for action in (lambda: read(ctx, name, "k"), lambda: write(ctx, name, {"k": "v"})):
        with pytest.raises(TargetError) as info:
            action()
        assert name in info.value.message and "hunter2" not in info.value.message
    assert (ctx.base_dir / name).read_text() == text  # never overwritten


# --- files, modes and writes ---------------------------------------------------------------

def test_new_file_is_created_0600(ctx: TargetContext) -> None:
    write(ctx, "deep/er/a.env", {"A": "x"})
    assert os.stat(ctx.base_dir / "deep/er/a.env").st_mode & 0o777 == 0o600


def test_existing_file_keeps_its_mode(ctx: TargetContext) -> None:
    path = ctx.base_dir / "a.env"
    path.write_text("A=1\n")
    path.chmod(0o640)
    write(ctx, "a.env", {"A": "2"})
    assert os.stat(path).st_mode & 0o777 == 0o640


def test_group_write_reads_and_writes_the_file_once(
        ctx: TargetContext, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = recorded_atomic_writes(monkeypatch)
    write(ctx, "a.env", {"A": "1", "B": "2", "C": "3"})
    assert len(calls) == 1
    assert FORMATS["dotenv"].load((ctx.base_dir / "a.env").read_text()) == {
        "A": "1", "B": "2", "C": "3"}


def test_unchanged_content_is_not_rewritten(ctx: TargetContext) -> None:
    write(ctx, "a.env", {"A": "1"})
    inode = os.stat(ctx.base_dir / "a.env").st_ino
    write(ctx, "a.env", {"A": "1"})
    assert os.stat(ctx.base_dir / "a.env").st_ino == inode


def test_merge_false_leaves_only_the_keys_written(ctx: TargetContext) -> None:
    path = ctx.base_dir / "a.env"
    path.write_text("# old\nOLD=1\nA=0\n")
    write(ctx, "a.env", {"A": "1", "B": "2"}, merge=False)
    assert path.read_text() == "A=1\nB=2\n"


def test_two_values_for_one_key_in_a_group_are_refused(ctx: TargetContext) -> None:
    with pytest.raises(TargetError, match="two values") as info:
        KIND.write([(place("a.env", "A"), "v1"), (place("a.env", "A"), "v2")], ctx)
    assert "v1" not in info.value.message and "v2" not in info.value.message


@pytest.mark.parametrize(("name", "key"), [("a.env", "bad key"), ("a.tfvars", "1bad")])
def test_keys_the_format_cannot_hold_are_refused(ctx: TargetContext, name: str, key: str) -> None:
    with pytest.raises(TargetError, match="not a valid"):
        write(ctx, name, {key: "v"})


# --- confinement ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["../escape.env", "a/../../escape.env", "/tmp/abs.env", "."])
def test_paths_outside_the_definition_folder_are_refused_naming_the_setting(
        ctx: TargetContext, path: str) -> None:
    with pytest.raises(TargetError, match=r"outside the allowed target roots \(SERVICE_TARGET_ROOTS\)"):
        write(ctx, path, {"A": "x"})
    with pytest.raises(TargetError, match="SERVICE_TARGET_ROOTS"):
        read(ctx, path, "A")


@pytest.mark.parametrize("path", ["", "a\x00b"])
def test_paths_without_a_usable_shape_are_validation_errors(ctx: TargetContext, path: str) -> None:
    assert KIND.validate(place(path, "A").target, "secrets[0].targets[0]")


@pytest.mark.parametrize("path", ["../escape.env", "/srv/app/.env"])
def test_paths_outside_the_folder_have_a_valid_shape_for_the_kind(path: str) -> None:
    # The roots are a setting: validation checks them with the folder (see validate's tests).
    assert KIND.validate(place(path, "A").target, "secrets[0].targets[0]") == []


def test_absolute_path_inside_an_allowed_root_is_written_and_read(
        ctx: TargetContext, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("srv")
    rooted = replace(ctx, target_roots=(ctx.base_dir, root))
    path = str(root / "app" / ".env")
    assert write(rooted, path, {"A": "x"}) == {"A": sha256_text("x")}
    assert (root / "app" / ".env").read_text() == "A=x\n"
    assert read(rooted, path, "A")["A"].hash == sha256_text("x")


def test_absolute_path_inside_the_definition_folder_is_allowed_by_default(ctx: TargetContext) -> None:
    write(ctx, str(ctx.base_dir / "abs.env"), {"A": "x"})
    assert (ctx.base_dir / "abs.env").read_text() == "A=x\n"


def test_relative_path_leaving_the_folder_is_allowed_when_a_root_holds_it(ctx: TargetContext) -> None:
    (ctx.base_dir / "project").mkdir()
    nested = replace(ctx, base_dir=ctx.base_dir / "project", target_roots=(ctx.base_dir,))
    write(nested, "../shared.env", {"A": "x"})
    assert (ctx.base_dir / "shared.env").read_text() == "A=x\n"


def test_roots_replace_the_definition_folder(
        ctx: TargetContext, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = replace(ctx, target_roots=(tmp_path_factory.mktemp("srv"),))
    with pytest.raises(TargetError, match="SERVICE_TARGET_ROOTS"):
        write(elsewhere, "inside.env", {"A": "x"})
    assert not (ctx.base_dir / "inside.env").exists()


def test_a_root_itself_is_not_a_file(ctx: TargetContext) -> None:
    with pytest.raises(TargetError, match="SERVICE_TARGET_ROOTS"):
        write(ctx, str(ctx.base_dir), {"A": "x"})


def test_symlink_escaping_the_folder_is_refused(
        ctx: TargetContext, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (ctx.base_dir / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(TargetError, match="outside the allowed target roots"):
        write(ctx, "link/a.env", {"A": "x"})
    assert not (outside / "a.env").exists()


def test_symlink_in_a_root_pointing_outside_every_root_is_refused_for_absolute_paths(
        ctx: TargetContext, tmp_path_factory: pytest.TempPathFactory) -> None:
    root, outside = tmp_path_factory.mktemp("srv"), tmp_path_factory.mktemp("outside")
    (root / "link").symlink_to(outside, target_is_directory=True)
    rooted = replace(ctx, target_roots=(root,))
    with pytest.raises(TargetError, match="SERVICE_TARGET_ROOTS"):
        write(rooted, str(root / "link" / "a.env"), {"A": "x"})
    assert not (outside / "a.env").exists()


def test_target_id_of_an_absolute_path_is_the_path_as_written(ctx: TargetContext) -> None:
    # SecretZero's _build_target_id: f"{provider}/{kind}/{config['path']}"
    assert KIND.target_id(place("/srv/app/.env", "A").target, ctx) == "local/file//srv/app/.env"


def test_symlink_inside_the_folder_is_followed_and_kept(ctx: TargetContext) -> None:
    (ctx.base_dir / "real.env").write_text("A=1\n")
    (ctx.base_dir / "alias.env").symlink_to("real.env")
    write(ctx, "alias.env", {"A": "2"})
    assert (ctx.base_dir / "alias.env").is_symlink()
    assert (ctx.base_dir / "real.env").read_text() == "A=2\n"


# --- the kind's contract -------------------------------------------------------------------

def test_target_id_and_location_use_the_path_as_written(ctx: TargetContext) -> None:
    target = place("out/dev.env", "A").target
    assert KIND.target_id(target, ctx) == "local/file/out/dev.env"
    assert KIND.location(target, ctx) == "out/dev.env"


def test_same_file_spelled_differently_is_one_group(ctx: TargetContext) -> None:
    one = KIND.group(place("out/dev.env", "A").target, ctx)
    assert one == KIND.group(place("out/./x/../dev.env", "B").target, ctx)
    assert one != KIND.group(place("out/prod.env", "A").target, ctx)


@pytest.mark.parametrize(("path", "fmt"), [
    ("a.env", "dotenv"), (".env", "dotenv"), ("a.JSON", "json"), ("a.yml", "yaml"),
    ("a.yaml", "yaml"), ("a.toml", "toml"), ("a.tfvars", "tfvars"), ("a.txt", "dotenv"),
    ("secrets", "dotenv"),
])
def test_format_is_inferred_from_the_extension(path: str, fmt: str) -> None:
    assert infer_format(path) == fmt


def test_explicit_format_overrides_the_extension(ctx: TargetContext) -> None:
    write(ctx, "a.txt", {"A": "x"}, format="json")
    assert json.loads((ctx.base_dir / "a.txt").read_text()) == {"A": "x"}


def test_validate_names_the_place_and_a_missing_path() -> None:
    errors = KIND.validate(TargetSpec("local", "file", {}), "secrets[1].targets[0]")
    assert errors == ["secrets[1].targets[0]: config.path is required and must be a non-empty string"]


@pytest.mark.parametrize(("config", "expected"), [
    ({"path": "a.env", "format": "ini"}, "config.format 'ini' is not one of dotenv, json, yaml, toml, tfvars"),
    ({"path": "a.env", "merge": "yes"}, "config.merge"),
    ({"path": "a.env", "key": 3}, "config.key"),
])
def test_advise_names_the_place_and_what_secretzero_accepts_loosely(config: dict[str, Any], expected: str) -> None:
    target = TargetSpec("local", "file", config)
    assert KIND.validate(target, "here") == []
    (warning,) = LocalFileKind().advise(target, "secrets[1].targets[0]")
    assert warning.startswith("secrets[1].targets[0]: ") and expected in warning


def test_validate_accepts_a_good_config() -> None:
    config = {"path": "out/a.env", "format": "dotenv", "merge": False, "key": "K"}
    target = TargetSpec("local", "file", config)
    assert KIND.validate(target, "here") == [] and LocalFileKind().advise(target, "here") == []


@pytest.mark.parametrize("fmt", ["JSON", " json ", "Json"])
def test_a_format_is_read_as_secretzero_reads_it_trimmed_and_lower_cased(ctx: TargetContext, fmt: str) -> None:
    write(ctx, "a.txt", {"A": "x"}, format=fmt)
    assert json.loads((ctx.base_dir / "a.txt").read_text()) == {"A": "x"}


def test_a_blank_format_is_inferred_from_the_extension(ctx: TargetContext) -> None:
    write(ctx, "a.json", {"A": "x"}, format="")
    assert json.loads((ctx.base_dir / "a.json").read_text()) == {"A": "x"}


def test_registry_knows_both_local_kinds_and_rejects_unknown_types() -> None:
    assert {k.type for k in kinds()} >= {"local/file", "local/template"}
    assert all(isinstance(k, TargetKind) for k in kinds())
    with pytest.raises(TargetError, match="aws/nope"):
        get_kind("aws/nope")


def test_describe_lists_every_config_key() -> None:
    description = KIND.describe()
    assert set(description["config"]) == {"path", "format", "key", "merge"}
    assert description["config"]["merge"]["default"] is True



def test_read_back_value_is_kept_out_of_its_repr() -> None:
    back = ReadBack(True, "0" * 64, "out/app.env", "s3cret-value")
    assert back.value == "s3cret-value"
    assert "s3cret-value" not in repr(back)


# --- dotenv for every reader ---------------------------------------------------------------

def bash_reads(path: Path, key: str) -> str:
    """What a shell that sources the file holds: ``set -a; . ./file``."""
    result = subprocess.run(["bash", "-c", f'set -a; . ./{path.name}; printf %s "${key}"'],
                            cwd=path.parent, capture_output=True, text=True, timeout=10,
                            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert result.returncode == 0, result.stderr
    return result.stdout


SHELL_EXACT = [v for v in NASTY if "\r" not in v]  # a CR is written as \r, which a shell keeps


@pytest.mark.slow
@pytest.mark.parametrize("value", SHELL_EXACT, ids=range(len(SHELL_EXACT)))
def test_bash_sourcing_the_dotenv_file_reads_every_value_exactly(ctx: TargetContext, value: str) -> None:
    write(ctx, "a.env", {"K": value})
    assert bash_reads(ctx.base_dir / "a.env", "K") == value


def literal_form_exists(value: str) -> bool:
    return "\n" not in value and "\r" not in value and (
        "'" not in value or not any(ch in value for ch in '"\\$`'))


SECRETZERO_EXACT = [v for v in NASTY if literal_form_exists(v)]


@pytest.mark.parametrize("value", SECRETZERO_EXACT, ids=range(len(SECRETZERO_EXACT)))
def test_secretzero_reads_every_value_with_a_literal_form_exactly(ctx: TargetContext, value: str) -> None:
    write(ctx, "a.env", {"K": value})
    assert load_secretzero((ctx.base_dir / "a.env").read_text())["K"] == value


@pytest.mark.parametrize(("value", "line"), [
    ("abc-DEF_1", "K=abc-DEF_1"), ("", "K="), ("a b $c \\d \"e\"", "K='a b $c \\d \"e\"'"),
    ("it's", "K=\"it's\""), ("it's $x", "K=\"it's \\$x\""), ("a\nb", 'K="a\nb"'),
])
def test_dotenv_writes_the_first_form_every_reader_reads_exactly(
        ctx: TargetContext, value: str, line: str) -> None:
    write(ctx, "a.env", {"K": value})
    assert (ctx.base_dir / "a.env").read_text() == line + "\n"


@pytest.mark.parametrize("value", ["a\\nb c", 'say "hi" now', "p@ss w$rd\\t", "x \\\\ y"])
def test_secretzero_raw_quoting_reads_as_misencoded_with_its_own_reading(
        ctx: TargetContext, value: str) -> None:
    (ctx.base_dir / "a.env").write_text(f'K="{value}"\n')  # SecretZero's _format_dotenv
    back = read(ctx, "a.env", "K")["K"]
    assert back.misencoded_value == value
    assert back.hash != sha256_text(value)


def test_a_value_every_reader_agrees_on_has_no_misencoded_reading(ctx: TargetContext) -> None:
    (ctx.base_dir / "a.env").write_text('K="two words"\nL=\'x y\'\n')
    backs = read(ctx, "a.env", "K", "L")
    assert (backs["K"].misencoded_value, backs["L"].misencoded_value) == (None, None)


def test_a_target_group_is_its_normalized_path_and_a_relative_folder_follows_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert lexical_key(tmp_path, {"path": "out/../out//a.env"}, "path") == str(tmp_path / "out" / "a.env")
    assert lexical_key(tmp_path, {"path": "/etc/x/../a.env"}, "path") == "/etc/a.env"
    for folder in (tmp_path / "one", tmp_path / "two"):  # kept normalized paths never outlive a chdir
        folder.mkdir()
        monkeypatch.chdir(folder)
        assert lexical_key(Path("defs"), {"path": "a.env"}, "path") == str(folder / "defs" / "a.env")
