"""`flightdeck launch NAME[@VERSION]|PATH`: run a verified Flight Plan."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import click

from flightdeck._json import read_json
from flightdeck.audit import AuditStoreError
from flightdeck.cli._params import utf8_text
from flightdeck.cli._render import console, fail
from flightdeck.cli.run._temporal import skip_teardown, temporal_missing
from flightdeck.flightplan import Input
from flightdeck.launch import (
    Approvals,
    LaunchError,
    LaunchEvent,
    LaunchOptions,
    ResumeDecisions,
    RunResult,
    TemporalSettings,
    configured_runtime,
    configured_settings,
    configured_temporal,
    frozen_workspace,
    route_run,
)
from flightdeck.launch import (
    launch as run_launch,
)

EXIT_FAILED, EXIT_PENDING = 1, 3


def _pairs(values: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="'--input'")
        out[key] = value
    return out


def _decisions(accept: tuple[str, ...], retry: tuple[str, ...]) -> ResumeDecisions:
    accepted: dict[str, dict[str, Any]] = {}
    for item in accept:
        step, sep, raw = item.partition("=")
        try:
            outputs = read_json(raw) if sep else {}
        except ValueError as exc:
            raise click.BadParameter(f"{step}: not JSON: {exc}", param_hint="'--accept'") from None
        if not step or not isinstance(outputs, dict):
            raise click.BadParameter(
                f"expected STEP or STEP=<JSON object>, got {item!r}", param_hint="'--accept'"
            )
        accepted[step] = outputs
    both = sorted(set(accepted) & set(retry))
    if both:
        raise click.BadParameter(f"both accepted and retried: {', '.join(both)}")
    return ResumeDecisions(accept=accepted, retry=frozenset(retry))


class _Progress:
    """A live step table on a terminal; prompts pause it.

    The live display is transient: stopping it (for a prompt or a message)
    erases it, so neither an empty table before the first step nor a stale
    copy above a prompt stays on screen. It starts at the first step row,
    restarts below whatever a pause printed, and the final table is printed
    once when the run ends.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.rows: dict[str, str] = {}
        self.live: Any = None
        self.paused = False
        self.run_id: str | None = None

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()
        if self.enabled and self.rows:
            console().print(self._table())

    def _start(self) -> None:
        if not self.enabled or self.paused or not self.rows or self.live is not None:
            return
        from rich.live import Live

        self.live = Live(self._table(), console=console(), refresh_per_second=8, transient=True)
        self.live.start()

    def _stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def _table(self) -> Any:
        from rich.table import Table
        from rich.text import Text

        table = Table(show_header=True, header_style="bold")
        table.add_column("step")
        table.add_column("status")
        marks = {
            "completed": ("✓ completed", "green"),
            "failed": ("✗ failed", "red"),
            "running": ("… running", "cyan"),
            "pending-approval": ("⏸ pending approval", "yellow"),
            "blocked": ("– blocked", "dim"),
        }
        for step, status in self.rows.items():
            text, style = marks.get(status, (status, ""))
            table.add_row(Text(step), Text(text, style=style))
        return table

    def event(self, event: LaunchEvent) -> None:
        self.run_id = event.run_id
        if event.kind == "credential_probe":
            self._probe(event)
            return
        if event.step_id is not None and event.status is not None:
            self.rows[event.step_id] = event.status
            if self.live is not None:
                self.live.update(self._table())
            else:
                self._start()

    def _probe(self, event: LaunchEvent) -> None:
        message = event.detail.get("message", "")
        if event.status == "unrunnable":
            text = f"warning: credential probe of {event.step_id} not run: {message} (audited)"
        elif event.status == "failed":
            text = f"credential probe of {event.step_id} failed: {message}"
        else:
            text = f"credential probe of {event.step_id}: ok"
        self.pause()
        click.echo(text, err=True)
        self.resume()

    def pause(self) -> None:
        self.paused = True
        self._stop()

    def resume(self) -> None:
        self.paused = False
        self._start()


@click.command()
@click.argument("target", required=False)
@click.option("--input", "inputs", multiple=True, metavar="KEY=VALUE", help="A literal input.")
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where file outputs go (default: the run's folder in the data dir).",
)
@click.option(
    "--approve",
    multiple=True,
    metavar="STEP|all",
    help="Approve a non-read action step (repeatable), or all of them.",
)
@click.option(
    "--approvals",
    "approvals_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help='JSON file {"<step or *>": "approve" | "deny"}.',
)
@click.option("--max-parallel", type=click.IntRange(1, 1024), default=4, show_default=True)
@click.option(
    "--resume", metavar="RUN_ID", callback=utf8_text, help="Resume a paused or interrupted run."
)
@click.option(
    "--replay",
    metavar="RUN_ID",
    callback=utf8_text,
    help="Reuse a run's inputs and llm-seam outputs.",
)
@click.option(
    "--accept",
    "accept",
    multiple=True,
    metavar="STEP[=OUTPUTS_JSON]",
    help="With --resume: an in-doubt step took effect; record it done with these outputs.",
)
@click.option(
    "--retry",
    "retry",
    multiple=True,
    metavar="STEP",
    help="With --resume: run an in-doubt step again.",
)
@click.option(
    "--key",
    "expected_key",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="The publisher's public key (PEM) the plan must be signed with.",
)
@click.option(
    "--allow-rollback",
    is_flag=True,
    help="Run a version older than the newest verified here; needs NAME@VERSION.",
)
@click.option("--unsigned", is_flag=True, help="Run an unfrozen SKILL.md (recorded as unsigned).")
@click.option("--no-sandbox", is_flag=True, help="Run tool steps without a sandbox (audited).")
@click.option(
    "--verify-credentials",
    is_flag=True,
    help="Before any step, call each trust contract's verification probe (makes calls; audited).",
)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where .drivers/ and flightdeck.toml are. Default: the workspace a stored plan"
    " was frozen in, if it still exists, else the current directory.",
)
@click.option("--llm-provider", help="anthropic | openai (env FLIGHTDECK_LLM_PROVIDER).")
@click.option("--llm-model", help="Model for llm-seam steps without their own.")
@click.option("--llm-base-url", help="OpenAI-compatible base URL (local servers).")
@click.option(
    "--executor",
    type=click.Choice(["local", "temporal"]),
    help="Walk the graph here (default), or as a Temporal workflow run by `flightdeck"
    " worker`s. Default from [temporal] executor.",
)
@click.option(
    "--temporal",
    "temporal_address",
    metavar="HOST:PORT",
    help="The Temporal frontend (default [temporal] address).",
)
@click.option(
    "--task-queue", help="With temporal: the workers' queue (default [temporal] task_queue)."
)
@click.option(
    "--tool-task-queue",
    help="With temporal: tool steps go to workers on this queue (default [temporal]"
    " tool_task_queue, else --task-queue).",
)
@click.option(
    "--detach",
    is_flag=True,
    help="With temporal: return once the run started; it holds for approvals by signal.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Verify, resolve inputs, drivers, credentials and approvals, and print what would run;"
    " nothing runs and no run is recorded.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def launch(
    target: str | None,
    inputs: tuple[str, ...],
    out_dir: Path | None,
    approve: tuple[str, ...],
    approvals_file: Path | None,
    max_parallel: int,
    resume: str | None,
    replay: str | None,
    accept: tuple[str, ...],
    retry: tuple[str, ...],
    expected_key: Path | None,
    allow_rollback: bool,
    unsigned: bool,
    no_sandbox: bool,
    verify_credentials: bool,
    workspace: Path | None,
    llm_provider: str | None,
    llm_model: str | None,
    llm_base_url: str | None,
    executor: str | None,
    temporal_address: str | None,
    task_queue: str | None,
    tool_task_queue: str | None,
    detach: bool,
    dry_run: bool,
    fmt: str,
) -> None:
    """Verify a Flight Plan, resolve its inputs once, run its step graph with
    every trust contract enforced, write its outputs and audit.

    \b
    Exit status: 0 completed (or started, with --detach), 1 failed, 3 paused for
    approval, 130 interrupted.
    Examples:
      flightdeck launch metrics-digest@1.0.0 --approve file_issue
      flightdeck launch metrics-digest --input window_days=30 --out-dir out/
      flightdeck launch --resume run-20250101T000000-ab12cd --approve all
      flightdeck launch ./SKILL.md --unsigned
      flightdeck launch metrics-digest@1.0.0 --verify-credentials
      flightdeck launch metrics-digest@1.0.0 --dry-run
      flightdeck launch metrics-digest@1.0.0 --executor temporal --temporal 127.0.0.1:7233
    """
    if target is None and resume is None:
        raise click.UsageError("name a plan (NAME[@VERSION] or PATH) or pass --resume RUN_ID")
    terminal = sys.stdin.isatty() and sys.stdout.isatty() and fmt == "text"
    if unsigned:
        click.echo("warning: launching an UNSIGNED plan (recorded in the audit)", err=True)
    if no_sandbox:
        click.echo("warning: tool steps run WITHOUT a sandbox (recorded in the audit)", err=True)
    progress = _Progress(terminal)
    if out_dir is not None and not dry_run:
        _ensure_out_dir(out_dir)

    def ask_input(item: Input) -> str | None:
        progress.pause()
        try:
            return str(click.prompt(f"input {item.name} ({item.type})"))
        finally:
            progress.resume()

    def ask_approval(step: str, ref: str, effect: str) -> bool:
        progress.pause()
        try:
            return click.confirm(f"approve step {step}: {ref} (effect {effect})?", default=False)
        finally:
            progress.resume()

    # A Temporal client leaves core threads behind: end without teardown.
    with skip_teardown():
        if workspace is None:
            workspace = frozen_workspace(target, resume) if not unsigned else None
            workspace = workspace or Path(".")
        try:
            approvals = Approvals.build(approve, approvals_file, ask_approval if terminal else None)
            settings = configured_settings(
                workspace.resolve(),
                no_sandbox=no_sandbox,
                llm_provider=llm_provider,
                llm_model=llm_model,
                llm_base_url=llm_base_url,
            )
            options = LaunchOptions(
                inputs=_pairs(inputs),
                out_dir=out_dir.resolve() if out_dir else None,
                approvals=approvals,
                max_parallel=max_parallel,
                resume=resume,
                replay=replay,
                unsigned=unsigned,
                settings=settings,
                input_prompt=ask_input if terminal else None,
                on_event=progress.event,
                verify_credentials=verify_credentials,
                decisions=_decisions(accept, retry),
            )
            runtime = configured_runtime(workspace.resolve())
            if expected_key is not None:
                runtime = dataclasses.replace(runtime, expected_key=expected_key.read_bytes())
            if allow_rollback:
                runtime = dataclasses.replace(runtime, allow_rollback=True)
            if dry_run:
                from flightdeck.cli.run._dry_run import show_dry_run

                show_dry_run(target, options, runtime, fmt)
            # A resumed run goes where it lives (its journal record), not
            # where the configuration sends new runs.
            temporal = route_run(
                runtime.journal.run(resume) if resume else None,
                configured_temporal(
                    workspace.resolve(), executor=executor, address=temporal_address
                ),
                executor=executor,
                address=temporal_address,
                task_queue=task_queue,
                tool_task_queue=tool_task_queue,
            )
            if temporal.executor == "temporal":
                runtime = dataclasses.replace(runtime, engine=_engine(temporal, detach))
            elif temporal_address or task_queue or tool_task_queue or detach:
                raise click.UsageError(
                    "--temporal, --task-queue and --detach go with --executor temporal"
                )
            with progress:
                result = _run_interruptibly(run_launch(target, options, runtime))
        except KeyboardInterrupt:
            where = f" --resume {progress.run_id}" if progress.run_id else ""
            kept = f"completed steps are kept: flightdeck launch{where}"
            click.echo(f"\ninterrupted; {kept}", err=True)
            if fmt == "json":
                stopped = {"ok": False, "run_id": progress.run_id, "status": "interrupted"}
                click.echo(json.dumps(stopped, indent=2))
            sys.stdout.flush()
            sys.stderr.flush()
            # A sync action still running in a worker thread would hold the
            # interpreter open until it returns; the journal is already committed.
            os._exit(130)
        except (LaunchError, AuditStoreError) as exc:
            fail(exc, fmt, EXIT_FAILED)
        except ModuleNotFoundError as exc:
            if not (exc.name or "").startswith("temporalio"):
                raise
            fail(temporal_missing(exc), fmt, EXIT_FAILED)
        _report(result, fmt)


def _engine(temporal: TemporalSettings, detach: bool) -> Any:
    if not temporal.address:
        raise click.UsageError(
            "--executor temporal needs --temporal HOST:PORT (or [temporal] address)"
        )
    from flightdeck.launch import TemporalEngine

    return TemporalEngine(
        temporal.address,
        temporal.task_queue,
        temporal.namespace,
        detach=detach,
        heartbeat_timeout=temporal.heartbeat_timeout,
        tool_task_queue=temporal.tool_task_queue,
    )


def _run_interruptibly(main: Coroutine[Any, Any, RunResult]) -> RunResult:
    """Run the launch; on Ctrl-C cancel it (the runtime journals the run as
    interrupted) and re-raise at once. `asyncio.run` would instead wait for a
    sync action still running in a worker thread before returning."""
    loop = asyncio.new_event_loop()
    task = loop.create_task(main)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        task.cancel()
        with contextlib.suppress(BaseException):
            loop.run_until_complete(task)
        raise


def _ensure_out_dir(out_dir: Path) -> None:
    """Create --out-dir before any step runs: the library writes outputs only
    after every step (a write action included) has run."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        message = f"cannot create {out_dir}: {reason}"
        raise click.BadParameter(message, param_hint="'--out-dir'") from None


def _report(result: RunResult, fmt: str) -> None:
    if fmt == "json":
        # `ok` is the exit status: 0 for a run that completed or, detached, started.
        ok = result.status in ("completed", "running")
        click.echo(json.dumps({"ok": ok, **result.to_dict()}, indent=2))
    else:
        click.echo(f"run {result.run_id}: {result.status}")
        for output in result.outputs:
            where = output["path"] or "(kept in the run record)"
            click.echo(f"  output {output['name']}: {where} ({output['bytes']} bytes)")
        if result.status == "running":
            click.echo("  detached: the run goes on on its workers")
            click.echo(f"  follow it: flightdeck runs show {result.run_id}")
        if result.pending:
            click.echo(f"  waiting for approval: {', '.join(result.pending)}")
            click.echo(
                f"  resume: flightdeck launch --resume {result.run_id} "
                + " ".join(f"--approve {step}" for step in result.pending)
            )
        if result.error is not None:
            click.echo(result.error.describe(), err=True)
        for warning in result.warnings:
            click.echo(f"warning: {warning} (recorded in the audit)", err=True)
        click.echo(f"  audit: {result.audit} (flightdeck runs show {result.run_id})")
        click.echo(f"  journal: {result.journal}")
    if result.status == "failed":
        raise SystemExit(EXIT_FAILED)
    if result.status == "pending-approval":
        raise SystemExit(EXIT_PENDING)
