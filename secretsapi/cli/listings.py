"""What ``list``, ``render`` and the printing of every subcommand share between the local mode and
``--addr``: the listings built from what the definition declares (or what the service answered
about it), and a report printed with its exit code. Django-free: the remote mode never sets it up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click
import yaml

from secretsapi.management.output import Failure, error_json
from secretsapi.management.reports import Report, table_report
from secretsapi.service.results import SecretSummary


def emit(report: Report | None, output_format: str) -> int:
    """Print ``report`` as text or JSON (and its problem on stderr); its exit code."""
    if report is None:  # it printed as it went (audit --follow)
        return 0
    click.echo(json.dumps(report.data, indent=2, default=str) if output_format == "json" else report.text)
    if report.problem is not None and output_format != "json":
        click.echo(report.problem.detail, err=True)
    return report.exit_code


def emit_failure(failure: Failure, output_format: str) -> int:
    if output_format == "json":
        click.echo(error_json(failure))
    else:
        click.echo(f"Error: {failure.detail}", err=True)
    return failure.returncode


def rendered(config: dict[str, Any], *, output: Path | None, as_yaml: bool) -> Report:
    text = yaml.safe_dump(config, sort_keys=False) if as_yaml else json.dumps(config, indent=2)
    if output is None:
        return Report(config, text)
    output.write_text(text if text.endswith("\n") else text + "\n")
    return Report({"output": str(output)}, f"Rendered to {output}")


def secrets_listing(summaries: Iterable[SecretSummary], name_filter: str | None) -> Report:
    rows = [
        {"name": s.name, "kind": s.kind, "one_time": s.one_time, "rotation_period": s.rotation_period,
         "targets_count": len(s.targets),
         "targets": [dict(zip(("provider", "kind"), t.split("/", 1), strict=False)) for t in s.targets]}
        for s in summaries
        if not name_filter or name_filter.lower() in s.name.lower()
    ]
    return table_report("secrets", rows, ("NAME", "KIND", "ONE-TIME", "ROTATION", "TARGETS"),
                        lambda r: (r["name"], r["kind"], "yes" if r["one_time"] else "no", r["rotation_period"],
                                   [f"{t['provider']}/{t.get('kind', '')}" for t in r["targets"]]))


def targets_listing(config: dict[str, Any]) -> Report:
    rows = [
        {"secret": secret.get("name"), "provider": target.get("provider"), "kind": target.get("kind"),
         "config": target.get("config") or {}}
        for secret in items(config.get("secrets")) for target in items(secret.get("targets"))
    ]
    return table_report("targets", rows, ("SECRET", "PROVIDER", "KIND", "CONFIG"),
                        lambda r: (r["secret"], r["provider"], r["kind"], r["config"]))


def providers_listing(declared: Iterable[dict[str, Any]]) -> Report:
    rows = [{"name": p["alias"], "kind": p["kind"], "auth_kind": p["auth_kind"], "config": p["config"]}
            for p in declared]
    return table_report("providers", rows, ("NAME", "KIND", "AUTH"), lambda r: (r["name"], r["kind"], r["auth_kind"]))


def variables_listing(config: dict[str, Any], name_filter: str | None) -> Report:
    variables = config.get("variables") or {}
    rows = [{"name": name, "value": value} for name, value in variables.items()
            if not name_filter or name_filter.lower() in name.lower()]
    report = table_report("variables", rows, ("NAME", "VALUE"), lambda r: (r["name"], json.dumps(r["value"])))
    report.data = {"variables": {row["name"]: row["value"] for row in rows}, "total": len(rows)}
    return report


def items(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
