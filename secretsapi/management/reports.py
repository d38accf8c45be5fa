"""What the command line prints for each operation, and how it exits: shared by ``manage.py``'s
commands and ``secretsctl``, so both say the same thing in the same words and exit alike.

A ``Report`` holds the result as JSON-able data (``--json`` / ``--format json``), its text, and
the failure to raise once it is printed: a finding (exit 2) or a failure (exit 1).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from secretsapi.management.output import EXIT_ERROR, EXIT_FINDING, Failure, columns, to_the_second
from secretsapi.service.results import (
    CleanResult,
    DriftResult,
    ImportResult,
    PolicyResult,
    RotationCheckResult,
    RotationResult,
    SecretStatus,
    SecretSummary,
    SyncResult,
    ValidationReport,
    sync_summary,
)


@dataclass
class Report:
    """``data`` may be given as a function of no arguments, called when the JSON is asked for:
    20,000 statuses' data cost more than their text, which is what is usually printed."""

    _data: Any
    text: str
    problem: Failure | None = None

    @property
    def data(self) -> Any:
        if callable(self._data):
            self._data = self._data()
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        self._data = value

    @property
    def exit_code(self) -> int:
        return self.problem.returncode if self.problem is not None else 0


def plain(value: Any) -> Any:
    """Dataclasses (and lists of them) as JSON-able dicts."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def finding(message: str) -> Failure:
    """Exit 2, the result already printed."""
    return Failure("finding", message, returncode=EXIT_FINDING, emitted=True)


def failed(message: str) -> Failure:
    """Exit 1, the result (which names the errors) already printed."""
    return Failure("failed", message, returncode=EXIT_ERROR, emitted=True)


# -- sync and rotation --------------------------------------------------------------------


def merged_sync(results: Sequence[SyncResult]) -> SyncResult:
    """Several one-secret syncs (a repeated ``-s``) as one result; one result stays itself."""
    if len(results) == 1:
        return results[0]
    generated = [n for r in results for n in r.secrets_generated]
    skipped = [n for r in results for n in r.secrets_skipped]
    failed_names = [n for r in results for n in r.secrets_failed]
    repaired = [n for r in results for n in r.secrets_repaired]
    dry_run = any(r.dry_run for r in results)
    errors = [e for r in results for e in r.errors]
    message = sync_summary(generated, skipped, failed_names, repaired, dry_run=dry_run, errors=len(errors))
    written: dict[str, list[str]] = {}
    for r in results:
        written.update(r.written_targets)
    return SyncResult(
        secrets_generated=generated, secrets_skipped=skipped, secrets_failed=failed_names,
        errors=errors, dry_run=dry_run,
        message=message, secrets_repaired=repaired, written_targets=written,
    )


def sync_report(result: SyncResult) -> Report:
    # The errors first: a long run's failures are not lost above thousands of per-secret lines.
    lines = [result.message]
    lines += [f"  error      {e.secret} [{e.target or '-'}]: {e.message}" for e in result.errors]
    lines += [f"  generated  {name}" for name in result.secrets_generated]
    lines += [f"  repaired   {name}" for name in result.secrets_repaired]
    lines += [f"  skipped    {name}" for name in result.secrets_skipped]
    lines += [f"  refreshed  {key}: dropped {', '.join(ids)}" for key, ids in result.refreshed.items()]
    problem = failed(f"{len(result.errors)} error(s) during sync") if result.errors else None
    return Report(plain(result), "\n".join(lines), problem)


def merged_rotation(results: Sequence[RotationResult]) -> RotationResult:
    if len(results) == 1:
        return results[0]
    rotated = [n for r in results for n in r.rotated]
    written: dict[str, list[str]] = {}
    for r in results:
        written.update(r.written_targets)
    return RotationResult(rotated=rotated, failed=[n for r in results for n in r.failed],
                          errors=[e for r in results for e in r.errors],
                          message=f"Rotated {len(rotated)} secret(s).", written_targets=written)


def rotation_report(result: RotationResult) -> Report:
    lines = [result.message]
    lines += [f"  error    {e.secret} [{e.target or '-'}]: {e.message}" for e in result.errors]
    lines += [f"  rotated  {name}" for name in result.rotated]
    problem = failed(f"{len(result.failed)} secret(s) failed to rotate") if result.failed or result.errors else None
    return Report(plain(result), "\n".join(lines), problem)


def rotation_check_report(check: RotationCheckResult) -> Report:
    lines = [f"{check.secrets_checked} checked, {len(check.secrets_due)} due, {len(check.secrets_overdue)} overdue"]
    lines += columns([(r.name, r.status) for r in check.results])
    problem = finding("rotation is due") if check.secrets_due or check.secrets_overdue else None
    return Report(plain(check), "\n".join(lines), problem)


def merged_rotation_check(checks: Sequence[RotationCheckResult]) -> RotationCheckResult:
    if len(checks) == 1:
        return checks[0]
    return RotationCheckResult(
        secrets_checked=sum(c.secrets_checked for c in checks), secrets_due=[n for c in checks for n in c.secrets_due],
        secrets_overdue=[n for c in checks for n in c.secrets_overdue], results=[r for c in checks for r in c.results],
    )


# -- reads and checks ---------------------------------------------------------------------

STATUS_HEADER = ("NAME", "STATE", "CREATED (UTC)", "LAST CHANGE (UTC)", "LAST ROTATED", "ROTATIONS", "NEXT DUE")


def status_row(st: SecretStatus) -> tuple[str, ...]:
    if not st.exists:
        return (st.name, "not generated", "-", "-", "-", "-", "-")
    # No due date: a one-time secret or one without a rotation period never falls due.
    return (st.name, "generated", to_the_second(st.created_at), last_change(st),
            to_the_second(st.last_rotated) if st.last_rotated else "never", str(st.rotation_count),
            to_the_second(st.due_at) if st.due_at else "never")


def last_change(st: SecretStatus) -> str:
    """When the value last changed and how: ``2026-01-02 03:04:05 regenerated``."""
    return f"{to_the_second(st.updated_at)} {st.last_change}" if st.updated_at and st.last_change else "-"


_STATUS_FIELDS = tuple(f.name for f in dataclasses.fields(SecretStatus))


def status_data(st: SecretStatus) -> dict[str, Any]:
    """``plain(st)`` for this flat class (its one list copied), without ``dataclasses.asdict``'s
    recursive deep copy of every field: that was most of printing 20,000 statuses."""
    data = {name: getattr(st, name) for name in _STATUS_FIELDS}
    data["targets"] = list(st.targets)
    return data


def status_report(statuses: Sequence[SecretStatus], *, single: bool, verbose: bool = False) -> Report:
    """``single``: one secret was named, so the JSON is its object rather than a list;
    ``verbose``: the text also lists each secret's target ids."""
    lines = columns([STATUS_HEADER, *(status_row(st) for st in statuses)])
    if verbose:
        lines += [f"  {st.name}: {', '.join(st.targets) or '-'}" for st in statuses]
    def data() -> Any:
        return status_data(statuses[0]) if single and len(statuses) == 1 else [status_data(st) for st in statuses]

    problem = None if all(st.exists for st in statuses) else finding("some secrets are not generated")
    return Report(data, "\n".join(lines), problem)


def show_report(summary: SecretSummary, st: SecretStatus) -> Report:
    """One secret: what the definition says and what the lockfile records (never its value)."""
    rows = [
        ("Name", summary.name), ("Kind", summary.kind), ("Description", summary.description or "-"),
        ("One-time", "yes" if summary.one_time else "no"), ("Rotation", summary.rotation_period or "-"),
        ("Targets", ", ".join(summary.targets) or "-"), ("State", "generated" if st.exists else "not generated"),
    ]
    if st.exists:
        rows += [("Created (UTC)", to_the_second(st.created_at)), ("Updated (UTC)", to_the_second(st.updated_at)),
                 ("Last change (UTC)", last_change(st)),
                 ("Last rotated", to_the_second(st.last_rotated) if st.last_rotated else "never"),
                 ("Rotations", str(st.rotation_count)),
                 ("Next due", to_the_second(st.due_at) if st.due_at else "never"),
                 ("Target ids", ", ".join(st.targets) or "-")]
    data = {"definition": plain(summary), "status": plain(st)}
    return Report(data, "\n".join(columns(rows, indent="")))


def drift_report(result: DriftResult) -> Report:
    lines = ["Drift found." if result.has_drift else "No drift."]
    lines += columns([(d.secret, f"{d.details.get('reason')}: {d.details.get('target')}") for d in result.details])
    problem = finding(f"drift in {len(result.secrets_with_drift)} secret(s)") if result.has_drift else None
    return Report(plain(result), "\n".join(lines), problem)


def policy_report(result: PolicyResult) -> Report:
    lines = ["Compliant." if result.compliant else "Not compliant."]
    for item in result.errors + result.warnings:
        lines.append(f"  {item.severity:<8} {item.policy}: {item.secret}: {item.message}")
    return Report(plain(result), "\n".join(lines), None if result.compliant else finding("not compliant"))


def validation_report(report: ValidationReport) -> Report:
    lines = ["Valid." if report.valid else "Invalid."]
    lines += [f"  error    {message}" for message in report.errors]
    lines += [f"  warning  {message}" for message in report.warnings]
    return Report(plain(report), "\n".join(lines), None if report.valid else finding(f"{len(report.errors)} error(s)"))


def table_report(key: str, rows: list[dict[str, Any]], header: Sequence[str],
                 cells: Callable[[dict[str, Any]], Sequence[Any]]) -> Report:
    """A listing as SecretZero's ``list`` prints it: ``{key: rows, "total": n}`` as JSON, and
    as text a column per ``header`` entry, each row's ``cells``."""
    def cell(value: Any) -> str:
        if isinstance(value, list | tuple):
            return ", ".join(str(v) for v in value) or "-"
        if isinstance(value, dict):
            return ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
        return "-" if value is None or value == "" else str(value)

    lines = columns([tuple(header), *(tuple(cell(v) for v in cells(row)) for row in rows)], indent="")
    return Report({key: rows, "total": len(rows)}, "\n".join(lines))


def clean_report(result: CleanResult) -> Report:
    lines = [result.message, *(f"  {'orphaned' if result.dry_run else 'removed '}  {key}" for key in result.removed)]
    return Report(plain(result), "\n".join(lines))


def import_report(result: ImportResult) -> Report:
    lines = [result.message, *(f"  {row.status:<12} {row.lock_key}: {row.detail}" for row in result.rows)]
    problem = failed(f"{len(result.errors)} secret(s) could not be imported") if result.errors else None
    return Report(plain(result), "\n".join(lines), problem)
