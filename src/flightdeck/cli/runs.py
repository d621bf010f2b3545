"""`flightdeck runs list|show`: the run journal and each run's audit."""

from __future__ import annotations

import json

import click

from flightdeck.audit import AuditStoreError, default_sink
from flightdeck.cli._params import utf8_text
from flightdeck.cli._render import fail, print_table
from flightdeck.launch import Journal, LaunchError, run_list, run_report


@click.group()
def runs() -> None:
    """Runs of Flight Plans: status, steps, approvals, outputs and audit.

    \b
    Examples:
      flightdeck runs list
      flightdeck runs show run-20250101T000000-ab12cd --format json
      flightdeck runs path
    """


@runs.command("list")
@click.option("--limit", type=click.IntRange(1, 10000), default=50, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def list_runs(limit: int, fmt: str) -> None:
    """The most recent runs, newest first."""
    try:
        rows = run_list(Journal(), limit)
    except LaunchError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no runs yet")
        return
    print_table(
        ["run", "status", "plan", "started", "finished"],
        [(r["run_id"], r["status"], r["plan"], r["started_at"], r["finished_at"]) for r in rows],
    )


@runs.command("show")
@click.argument("run_id", callback=utf8_text)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def show_run(run_id: str, fmt: str) -> None:
    """One run: steps with timings and status, approvals, outputs, audit records."""
    try:
        report = run_report(run_id, Journal(), default_sink())
    except (LaunchError, AuditStoreError) as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"run {report['run_id']}: {report['status']}  plan {report['plan']}")
    click.echo(f"  plan hash {report['content_hash']}  launched {report['launch_time']}")
    if report["error"]:
        error = report["error"]
        click.echo(f"  error: {error.get('message')} [{error.get('code')}]")
    if report["steps"]:
        print_table(
            ["step", "kind", "status", "took", "tries", "approval"],
            [
                (
                    step["id"],
                    step["kind"],
                    step["status"],
                    f"{step['duration_ms']:.1f} ms" if step["duration_ms"] is not None else None,
                    str(step["attempts"]),
                    step["approval"],
                )
                for step in report["steps"]
            ],
        )
    for approval in report["approvals"]:
        click.echo(f"  approval: {approval['step']} {approval['decision']}")
    for output in report["outputs"]:
        click.echo(
            f"  output {output['name']}: {output['path'] or '(in run record)'}"
            f" {output['mime_type']} {output['bytes']} bytes sha256 {output['sha256'][:16]}"
        )
    click.echo(f"  audit records: {len(report['audit'])}")
    for record in report["audit"]:
        click.echo(f"    {record['timestamp']}  {record['kind']}")


@runs.command("path")
def runs_path() -> None:
    """Print where the run journal is stored."""
    click.echo(str(Journal().path))
