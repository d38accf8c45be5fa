"""``secretsctl login``, ``logout`` and ``whoami``: a key for a running service, verified against
it (``GET /whoami``) before it is stored, forgotten, and described. The key is read from a prompt
that does not echo it or from standard input (``--api-key-stdin``), never from the arguments."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click

from secretsapi.cli.program import EXIT_ERROR, EXIT_UNREACHABLE, examples, json_option
from secretsapi.cli.remote import address, credentials

ADDR_HELP = "The service's address (default: the one given before the subcommand, else SECRETSCTL_ADDR)."


def _addr(ctx: click.Context, given: str | None) -> str:
    addr = address.normalized(given) if given else address.given_addr(ctx)
    if addr is None:
        raise click.UsageError("no service address: give --addr URL (or set SECRETSCTL_ADDR)", ctx)
    return addr


def _remote(ctx: click.Context, addr: str, key: str | None) -> address.Remote:
    group = ctx.find_root().params
    remote = address.Remote(addr, project=None, ca_bundle=address.ca_bundle(group.get("ca_bundle")), key=key)
    from secretsapi.cli.handover import warn_plain_http

    warn_plain_http(remote)
    return remote


def _whoami(remote: address.Remote, as_json: bool) -> dict[str, Any]:
    # Here, not at the top: this module is imported for every subcommand's declaration, and the
    # client brings requests and Rich (0.13 s of every local command's start, which never uses them).
    from secretsapi.cli.remote.client import ServerError, Unreachable, connected

    try:
        with connected(remote) as api:
            answer: dict[str, Any] = api.get("/whoami")
            return answer
    except ServerError as exc:
        _fail(exc.error, exc.detail, EXIT_ERROR, as_json)
    except Unreachable as exc:
        _fail("unreachable", str(exc), EXIT_UNREACHABLE, as_json)


def _fail(error: str, detail: str, code: int, as_json: bool) -> NoReturn:
    if as_json:
        click.echo(json.dumps({"error": error, "detail": detail}, indent=2))
    else:
        click.echo(f"Error: {detail}", err=True)
    sys.exit(code)


def _read_key(from_stdin: bool) -> str:
    if from_stdin:
        key = sys.stdin.readline().strip()
    else:
        key = str(click.prompt("API key", hide_input=True, err=True)).strip()
    if not key:
        raise click.UsageError("no API key given")
    return key


@click.command(epilog=examples("secretsctl login --addr https://secrets.example.com      # prompts for the key",
                               "secretsctl login --api-key-stdin < key.txt                # SECRETSCTL_ADDR's"))
@click.option("--addr", "addr", default=None, metavar="URL", help=ADDR_HELP)
@click.option("--api-key-stdin", "from_stdin", is_flag=True,
              help="Read the key from standard input (one line) rather than a prompt.")
@json_option()
@click.pass_context
def login(ctx: click.Context, /, addr: str | None, from_stdin: bool, as_json: bool) -> None:
    """Check an API key against a service and store it for that address (the OS keyring, else a
    0600 file under ~/.config/secretsctl)."""
    where = _addr(ctx, addr)
    key = _read_key(from_stdin)
    who = _whoami(_remote(ctx, where, key), as_json)
    kept = credentials.store(where, key)
    if as_json:
        click.echo(json.dumps({"addr": where, "stored_in": kept, **who}, indent=2))
        return
    if who.get("insecure"):
        click.echo(f"Warning: {where} accepts every request without a key (insecure mode).", err=True)
    click.echo(f"Logged in to {where} as {who.get('name') or '-'}; the key is kept in {kept}.")


@click.command(epilog=examples("secretsctl logout --addr https://secrets.example.com"))
@click.option("--addr", "addr", default=None, metavar="URL", help=ADDR_HELP)
@click.pass_context
def logout(ctx: click.Context, /, addr: str | None) -> None:
    """Forget the key stored for a service."""
    where = _addr(ctx, addr)
    if credentials.remove(where):
        click.echo(f"Logged out of {where}.")
    else:
        click.echo(f"No key was stored for {where}.")


@click.command(epilog=examples("secretsctl whoami --addr https://secrets.example.com",
                               "secretsctl --addr https://secrets.example.com whoami --json"))
@click.option("--addr", "addr", default=None, metavar="URL", help=ADDR_HELP)
@json_option()
@click.pass_context
def whoami(ctx: click.Context, /, addr: str | None, as_json: bool) -> None:
    """The name, scopes and projects of the key secretsctl sends to a service."""
    where = _addr(ctx, addr)
    who = _whoami(_remote(ctx, where, address.key_for(where)), as_json or bool(ctx.find_root().params.get("as_json")))
    if as_json or ctx.find_root().params.get("as_json"):
        click.echo(json.dumps(who, indent=2))
        return
    if who.get("insecure"):
        click.echo(f"{where} runs in insecure mode: it has no API key configured and accepts every request.")
        return
    projects = who.get("projects")
    click.echo("\n".join([
        f"Service:   {where}",
        f"Key name:  {who.get('name') or '-'}",
        f"Scopes:    {', '.join(who.get('scopes') or []) or '-'}",
        f"Projects:  {'all' if projects is None else ', '.join(projects) or '-'}",
    ]))
