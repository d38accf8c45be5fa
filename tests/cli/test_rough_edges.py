"""secretsctl's smaller promises: ``--json`` as ``--format json``, an undefined name said the same
way by every subcommand (exit 1, with the closest name), the audit log's time and user filters,
completion of secret and environment names, and examples in every ``--help``."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from django.utils import timezone

from audit.models import AuditEntry
from audit.recorder import record
from secretsapi.cli.app import cli
from tests.factories import Project

pytestmark = pytest.mark.django_db


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)


def data(result: Result) -> Any:
    return json.loads(result.stdout)


@pytest.fixture
def here(lanes: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.chdir(lanes.root)
    return lanes


# -- --json ---------------------------------------------------------------------------------------


def test_json_after_the_subcommand_is_format_json(here: Project) -> None:
    run("sync")
    assert data(run("status", "--json")) == data(run("status", "--format", "json"))


def test_json_before_the_subcommand_applies_to_it(here: Project) -> None:
    result = run("--json", "list", "secrets")
    assert data(result)["total"] == 2


def test_a_usage_error_under_json_is_an_error_body(here: Project) -> None:
    result = run("sync", "--dryrun", "--json")
    assert (result.exit_code, data(result)["error"]) == (1, "usage")


def test_render_takes_json_too(here: Project) -> None:
    assert data(run("render", "--json"))["variables"] == {"env": "dev"}


# -- a name the definition does not declare ---------------------------------------------------------


@pytest.mark.parametrize("command", [("status", "-s"), ("show",), ("drift",), ("rotate", "--dry-run")])
def test_a_mistyped_secret_is_not_defined_with_the_closest_name(here: Project, command: tuple[str, ...]) -> None:
    result = run(*command, "db_pasword", "--json")
    assert result.exit_code == 1
    assert data(result) == {"error": "secret_not_defined", "detail": "secret 'db_pasword' is not defined in the "
                                                                     "definition file; did you mean 'db_password'?"}


def test_status_of_an_undefined_secret_says_so_on_stderr(here: Project) -> None:
    result = run("status", "-s", "db_pasword")
    assert result.exit_code == 1
    assert result.stderr.strip() == ("Error: secret 'db_pasword' is not defined in the definition file; "
                                     "did you mean 'db_password'?")


def test_a_name_like_none_gets_no_suggestion(here: Project) -> None:
    result = run("status", "-s", "zzzz", "--json")
    assert data(result)["detail"] == "secret 'zzzz' is not defined in the definition file"


def test_status_of_a_declared_secret_not_yet_generated_is_still_a_finding(here: Project) -> None:
    result = run("status", "-s", "db_password", "--json")
    assert (result.exit_code, data(result)["exists"]) == (2, False)


def test_status_without_a_definition_answers_from_the_lockfile(here: Project) -> None:
    here.definition.unlink()
    result = run("status", "-s", "db_password", "-l", ".gitsecrets.dev.lock", "--json")
    assert (result.exit_code, data(result)["exists"]) == (2, False)


# -- audit: --since, --until, --user -----------------------------------------------------------------


@pytest.fixture
def history(db: None) -> None:
    """Three rows: alice's three hours ago, bob's two hours ago, alice's just now."""
    now = timezone.now()
    for user, hours in (("cli:alice", 3), ("cli:bob", 2), ("cli:alice", 0)):
        pk = record(action="sync", resource="secrets", user=user, success=True, details={"hours": hours})
        AuditEntry.objects.filter(pk=pk).update(timestamp=now - timedelta(hours=hours))


def shown(*args: str) -> list[tuple[str, int]]:
    result = run("audit", "-a", "sync", *args, "--json")
    assert result.exit_code == 0, result.output
    return [(e["user"], e["details"]["hours"]) for e in data(result)["entries"]]


def test_audit_user_keeps_that_users_rows(history: None) -> None:
    assert shown("--user", "cli:alice") == [("cli:alice", 0), ("cli:alice", 3)]


def test_audit_since_takes_a_duration_ago(history: None) -> None:
    assert shown("--since", "150min") == [("cli:alice", 0), ("cli:bob", 2)]


def test_audit_until_takes_a_duration_ago(history: None) -> None:
    assert shown("--until", "1h") == [("cli:bob", 2), ("cli:alice", 3)]


def test_audit_since_takes_an_iso_time(history: None) -> None:
    since = (timezone.now() - timedelta(minutes=150)).isoformat()
    assert shown("--since", since, "-u", "cli:bob") == [("cli:bob", 2)]


@pytest.mark.parametrize(("given", "says"), [("30m", "write 30min for minutes or 30mo for months"),
                                             ("yesterday", "neither an ISO 8601 time")])
def test_audit_refuses_a_time_it_cannot_read_naming_the_forms(history: None, given: str, says: str) -> None:
    result = run("audit", "--since", given)
    assert result.exit_code == 1 and says in result.stderr


def test_audit_follow_takes_no_offset(history: None) -> None:
    result = run("audit", "--follow", "--offset", "1")
    assert result.exit_code == 1 and "--follow starts from the newest rows" in result.stderr


# -- completion -------------------------------------------------------------------------------------


def complete(*words: str) -> list[str]:
    """What bash would offer after ``secretsctl <words>`` (the last word is the one being typed)."""
    line = ["secretsctl", *words]
    result = CliRunner().invoke(cli, [], prog_name="secretsctl", env={
        "_SECRETSCTL_COMPLETE": "bash_complete", "COMP_WORDS": " ".join(line), "COMP_CWORD": str(len(line) - 1)})
    return [line.split(",", 1)[1] for line in result.stdout.splitlines() if line]


def test_completion_offers_the_secrets_of_the_definition(here: Project) -> None:
    assert complete("show", "") == ["db_password", "api_key"]
    assert complete("status", "-s", "db") == ["db_password"]
    assert complete("rotate", "a") == ["api_key"]


def test_completion_offers_the_environments(here: Project) -> None:
    assert complete("sync", "-e", "") == ["dev", "prod"]
    assert complete("-e", "p") == ["prod"]


def test_completion_reads_the_definition_named_by_f(project: Project, here: Project) -> None:
    other = here.root / "other.yml"
    other.write_text("version: '1'\nsecrets:\n  - name: elsewhere\n    kind: uuid\n")
    assert complete("-f", str(other), "drift", "") == ["elsewhere"]
    assert complete("drift", "-f", str(other), "") == ["elsewhere"]


def test_completion_without_f_or_a_secretfile_here_offers_nothing(here: Project, monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert complete("show", "") == []


def test_completion_of_an_unreadable_definition_offers_nothing(here: Project) -> None:
    here.definition.write_text("secrets: [unclosed\n")
    assert complete("show", "") == []


# -- help --------------------------------------------------------------------------------------------


def every_command() -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = [()]
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        found.append((name,))
        if isinstance(command, click.Group):
            found += [(name, sub) for sub in command.list_commands(ctx)]
    return found


@pytest.mark.parametrize("command", every_command(), ids=lambda c: " ".join(c) or "secretsctl")
def test_every_help_shows_examples_of_its_command(command: tuple[str, ...]) -> None:
    result = run(*command, "--help")
    assert result.exit_code == 0
    examples = result.stdout.split("Examples:\n", 1)[1].splitlines()
    assert examples and all(line.strip().startswith("secretsctl") or line.strip().startswith("eval")
                            for line in examples if line.strip())
    assert any(" ".join(("secretsctl", *command)) in line for line in examples)
