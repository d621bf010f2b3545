"""`flightdeck runs list|show|path|approve`: the run journal and each run's
audit; a Temporal run's live state and approvals on its cluster."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import click

from flightdeck.audit import AuditStoreError, default_sink
from flightdeck.cli._params import utf8_text
from flightdeck.cli._render import fail, print_table
from flightdeck.launch import Journal, LaunchError, RunRow, run_list, run_report

_TEMPORAL = click.option(
    "--temporal",
    "address",
    metavar="HOST:PORT",
    help="The Temporal frontend (default: the run's, as recorded; else [temporal] address).",
)
_NAMESPACE = click.option(
    "--namespace", help="Default: the run's, as recorded; else [temporal] namespace."
)
_WORKSPACE = click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    help="Where flightdeck.toml is (default: the current directory).",
)


@click.group()
def runs() -> None:
    """Runs of Flight Plans: status, steps, approvals, outputs and audit.

    \b
    Examples:
      flightdeck runs list
      flightdeck runs show run-20250101T000000-ab12cd --format json
      flightdeck runs path
      flightdeck runs outputs run-20250101T000000-ab12cd --out-dir ./out
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
@_TEMPORAL
@_NAMESPACE
@_WORKSPACE
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def show_run(
    run_id: str, address: str | None, namespace: str | None, workspace: Path, fmt: str
) -> None:
    """One run: steps with timings and status, approvals, outputs, audit
    records; for a Temporal run, also what its cluster says (the workflow's
    status and the steps it holds for)."""
    journal = Journal()
    try:
        report = run_report(run_id, journal, default_sink())
        row = journal.run(run_id)
    except (LaunchError, AuditStoreError) as exc:
        fail(exc, fmt)
    if row is not None and row.executor == "temporal":
        from flightdeck.cli.run._temporal import skip_teardown

        # A Temporal client leaves core threads behind: end without teardown.
        with skip_teardown():
            report["temporal"] = _live(row, address, namespace, workspace)
            _print_report(report, fmt)
        return
    _print_report(report, fmt)


def _print_report(report: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps({"ok": True, **report}, indent=2))
        return
    click.echo(f"run {report['run_id']}: {report['status']}  plan {report['plan']}")
    if "temporal" in report:
        _show_live(report["temporal"])
    click.echo(f"  plan hash {report['content_hash']}  launched {report['launch_time']}")
    if report.get("inputs_pending"):
        click.echo(f"  inputs being read on a worker: {', '.join(report['inputs_pending'])}")
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


@runs.command("outputs")
@click.argument("run_id", callback=utf8_text)
@click.option(
    "--out-dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The folder to write the run's outputs into (at their publish paths).",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def outputs_run(run_id: str, out_dir: Path, fmt: str) -> None:
    """Write a run's outputs into a folder, from the store: on any machine
    that reads the run's store (PostgreSQL), or where the run published
    them. Each is checked against the SHA-256 the run recorded.

    \b
    Examples:
      flightdeck runs outputs run-20250101T000000-ab12cd --out-dir ./out
    """
    from flightdeck.launch import write_outputs

    try:
        written = write_outputs(run_id, Journal(), out_dir)
    except LaunchError as exc:
        fail(exc, fmt)
    if fmt == "json":
        click.echo(json.dumps({"ok": True, "run_id": run_id, "outputs": written}, indent=2))
        return
    if not written:
        click.echo(f"run {run_id} has no outputs")
    for item in written:
        click.echo(f"{item['name']}: {item['written']} ({item['bytes']} bytes)")


@runs.command("path")
def runs_path() -> None:
    """Print where the run journal is stored (a file, or the store's URL
    without its password)."""
    journal = Journal()
    try:
        url = journal.url  # a bad URL or config.toml is an error here, not a path
    except LaunchError as exc:
        fail(exc, "text")
    click.echo(journal.location if url is not None else str(journal.path))


def _cluster(
    row: RunRow | None, address: str | None, namespace: str | None, workspace: Path
) -> tuple[str | None, str]:
    """The run's cluster: the flags, then the run's record, then the config."""
    from flightdeck.launch import configured_temporal, route_run

    config = configured_temporal(workspace.resolve())
    where = route_run(row, config, address=address, namespace=namespace)
    return where.address, where.namespace


def _live(
    row: RunRow, address: str | None, namespace: str | None, workspace: Path
) -> dict[str, Any]:
    """What the run's cluster says of it; an error in place of that when it
    cannot be asked (the journal's part of the report stands)."""
    import asyncio

    from flightdeck.cli.run._temporal import temporal_missing

    live: dict[str, Any] = {"address": None, "namespace": None}
    try:
        live["address"], live["namespace"] = _cluster(row, address, namespace, workspace)
        from flightdeck.launch import describe_run

        live |= asyncio.run(describe_run(str(live["address"]), row.run_id, live["namespace"]))
    except ModuleNotFoundError as exc:
        live["error"] = temporal_missing(exc).to_dict()
    except LaunchError as exc:
        live["error"] = exc.to_dict()
    return live


def _show_live(live: dict[str, Any]) -> None:
    where = f"on Temporal at {live['address']} (namespace {live['namespace']})"
    if "error" in live:
        error = live["error"]
        click.echo(f"  {where}: not asked: {error.get('message')} [{error.get('code')}]")
    elif live["workflow"] is None:
        click.echo(f"  {where}: no workflow (never started there, or its history is gone)")
    else:
        click.echo(f"  {where}: workflow {live['workflow']}")
        if live["waiting"]:
            click.echo(f"  waiting for approval: {', '.join(live['waiting'])}")


@runs.command("approve")
@click.argument("run_id", callback=utf8_text)
@click.argument("steps", nargs=-1, required=True)
@_TEMPORAL
@_NAMESPACE
@_WORKSPACE
@click.option("--deny", is_flag=True, help="Deny the steps instead.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def approve_run(
    run_id: str,
    steps: tuple[str, ...],
    address: str | None,
    namespace: str | None,
    workspace: Path,
    deny: bool,
    fmt: str,
) -> None:
    """Approve (or deny) steps a detached Temporal run holds for; the run
    then continues on its workers. The run's cluster is the one its launch
    recorded in this machine's journal, else [temporal] address.

    \b
    Examples:
      flightdeck runs approve run-20250101T000000-ab12cd file_issue
      flightdeck runs approve run-20250101T000000-ab12cd file_issue --temporal 127.0.0.1:7233
    """
    import asyncio

    from flightdeck.cli.run._temporal import skip_teardown, temporal_missing

    with skip_teardown():
        try:
            row = Journal().run(run_id)
            _check_approvable(row, run_id, steps)
            where, ns = _cluster(row, address, namespace, workspace)
            if not where:
                raise _no_address(run_id, steps)
            from flightdeck.launch import signal_approval

            asyncio.run(signal_approval(where, run_id, list(steps), deny=deny, namespace=ns))
        except ModuleNotFoundError as exc:
            fail(temporal_missing(exc), fmt)
        except LaunchError as exc:
            fail(exc, fmt)
        decision = "denied" if deny else "approved"
        if fmt == "json":
            done = {"ok": True, "run_id": run_id, "decision": decision, "steps": list(steps)}
            click.echo(json.dumps(done | {"address": where, "namespace": ns}, indent=2))
        else:
            click.echo(f"run {run_id}: {decision} {', '.join(steps)}")


def _check_approvable(row: RunRow | None, run_id: str, steps: tuple[str, ...]) -> None:
    if row is None or row.executor != "local":
        return
    approvals = [arg for step in steps for arg in ("--approve", step)]
    raise LaunchError(
        "runs.not_temporal",
        f"run {run_id} ran on the local executor: there is no workflow to signal",
        hint="approve its steps by resuming it: "
        + shlex.join(["flightdeck", "launch", "--resume", run_id, *approvals]),
    )


def _no_address(run_id: str, steps: tuple[str, ...]) -> LaunchError:
    return LaunchError(
        "temporal.no_address",
        f"run {run_id} is not in this machine's journal and no Temporal frontend is configured",
        hint="name it: "
        + shlex.join(["flightdeck", "runs", "approve", run_id, *steps, "--temporal"])
        + " HOST:PORT (or set [temporal] address)",
    )
