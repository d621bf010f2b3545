"""`launch`: verify, resolve inputs once, walk the graph, materialize, audit.

    result = await launch("weekly-metrics-digest@1.0.0", LaunchOptions(inputs={"window_days": "7"}))

Verification comes first (hash, signature, publisher trust, as `verify`);
an unfrozen SKILL.md runs only with `unsigned=True`, which is recorded. A
new run resolves its inputs once and records them (by value) in the journal
and the launch audit record; a resumed run (`resume=RUN_ID`) re-verifies
the same plan, reuses the recorded inputs and completed steps, and re-runs
only what did not complete. `replay=RUN_ID` reuses another run's inputs and
recorded llm-seam outputs. Before anything runs (a source read or a probe
included), the code behind every action ref is checked against the digests
the lock pinned at freeze (`launch.code_changed`, `_pins.py`); a plan frozen
without pins runs as before, with "code not pinned" in the audit and the
result. `verify_credentials=True` first runs every
declared `trustContract.verification` probe (`_probe.py`) and refuses the
launch when one fails.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flightdeck.config import data_dir
from flightdeck.flightplan import (
    FlightPlan,
    FlightPlanError,
    Input,
    load_plan,
    verify_plan,
)
from flightdeck.launch._inputs import ResolvedInputs, resolve_inputs
from flightdeck.launch._pins import check_code
from flightdeck.launch._source_tasks import deferred_sources, source_task
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._task import StepOutcome, StepSettings
from flightdeck.launch.engine._approval import Approvals
from flightdeck.launch.engine._audit import AuditRouter
from flightdeck.launch.engine._conclude import RunResult, conclude
from flightdeck.launch.engine._events import EventSink, LaunchEvent, ignore
from flightdeck.launch.engine._executor import Executor, LocalExecutor
from flightdeck.launch.engine._journal import Journal
from flightdeck.launch.engine._probe import ProbeResult, check_probes, verify_credentials
from flightdeck.launch.engine._resume import ResumeDecisions, in_doubt, memoised, replay_outputs
from flightdeck.launch.engine._route import check_executor
from flightdeck.launch.engine._rows import RunRow
from flightdeck.launch.engine._run_lock import run_lock
from flightdeck.launch.engine._runtime import RunEngine, Runtime
from flightdeck.launch.engine._scheduler import Scheduler
from flightdeck.launch.engine._target import VerifiedTarget


@dataclass
class LaunchOptions:
    inputs: Mapping[str, Any] = field(default_factory=dict)
    out_dir: Path | None = None  # default: data_dir()/runs/<run id>/outputs
    approvals: Approvals = field(default_factory=Approvals)
    max_parallel: int = 4
    resume: str | None = None
    replay: str | None = None
    unsigned: bool = False
    settings: StepSettings = field(default_factory=StepSettings)
    input_prompt: Callable[[Input], str | None] | None = None
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    on_event: EventSink = ignore
    verify_credentials: bool = False  # run trustContract.verification probes first
    decisions: ResumeDecisions = field(default_factory=ResumeDecisions)  # in-doubt steps


def verify_target(target: str | Path, unsigned: bool, runtime: Runtime) -> VerifiedTarget:
    if unsigned:
        path = Path(target)
        if not path.is_file():
            raise LaunchError("launch.not_found", f"--unsigned needs a SKILL.md path: {target}")
        loaded = load_plan(path)
        if loaded.plan is None or loaded.document is None or not loaded.ok:
            first = loaded.errors[0] if loaded.errors else None
            detail = f"{first.location}: {first.message} [{first.code}]" if first else "unreadable"
            raise LaunchError("launch.invalid_plan", f"the plan does not validate: {detail}")
        digest = loaded.content_hash()
        return VerifiedTarget(loaded.plan, path, digest, unsigned=True)
    try:
        verified = verify_plan(
            target,
            store=runtime.store,
            keyring=runtime.keyring,
            key=runtime.expected_key,
            trust=runtime.trust,
            allow_rollback=runtime.allow_rollback,
        )
    except FlightPlanError as exc:
        hint = exc.hint
        if exc.code == "verify.not_frozen":
            hint = "freeze it first (flightdeck freeze), or launch it with --unsigned"
        raise LaunchError(exc.code, exc.message, hint=hint) from None
    from flightdeck.launch.image._origin import from_origin

    return VerifiedTarget(
        from_origin(verified.plan, verified.path),
        verified.path,
        verified.content_hash,
        verified.version,
        verified.publisher,
        verified.signer_key_id,
    )


def new_run_id(clock: Callable[[], datetime]) -> str:
    return clock().strftime("run-%Y%m%dT%H%M%S-") + secrets.token_hex(3)


async def launch(target: str | Path | None, options: LaunchOptions, runtime: Runtime) -> RunResult:
    """Launch (or resume) a plan. Raises `LaunchError` when nothing ran (bad
    plan, bad inputs); a run that started always returns a `RunResult`."""
    with ExitStack() as held:
        return await _launch(target, options, runtime, held)


async def _launch(
    target: str | Path | None, options: LaunchOptions, runtime: Runtime, held: ExitStack
) -> RunResult:
    previous = _previous(runtime.journal, options.resume)
    if previous is not None:
        check_executor(previous, runtime.engine)  # before anything is verified or written
        target = previous.plan_path
        options.unsigned = bool(previous.options.get("unsigned"))
        options.replay = options.replay or previous.options.get("replay_of")
    if options.decisions and previous is None:
        raise LaunchError(
            "resume.not_in_doubt",
            "--accept and --retry decide in-doubt steps of a resumed run",
            hint="use them with --resume RUN_ID",
        )
    if target is None:
        raise LaunchError("launch.no_target", "name a plan (NAME[@VERSION] or PATH) or --resume")
    verified = verify_target(target, options.unsigned, runtime)
    if previous is not None and previous.content_hash != verified.content_hash:
        raise LaunchError(
            "resume.plan_changed",
            f"run {previous.run_id} ran {previous.content_hash}, the plan now is"
            f" {verified.content_hash}",
        )
    _check_approvals(verified.plan, options.approvals)
    code = check_code(verified.plan, runtime.services.invoker)  # raises launch.code_changed
    router = AuditRouter(runtime.audit, runtime.audit_sinks)
    executor = runtime.executor or LocalExecutor(runtime.services, record=router.write)
    replayed = _previous(runtime.journal, options.replay)
    run_id = previous.run_id if previous is not None else new_run_id(options.clock)
    # One process walks a run (`_run_lock`): taken before any journal write.
    held.enter_context(run_lock(runtime.journal, run_id))
    if previous is not None and runtime.engine is not None:
        # Before any journal write: an open run's `started` rows are steps in
        # flight, not in doubt, and a completed row must not be overwritten.
        await runtime.engine.check_resumable(run_id, previous.cluster)
    probes: list[ProbeResult] = []
    if options.verify_credentials:  # before anything runs, a source read included
        probes = await _verify_credentials(verified.plan, runtime, router, run_id, options)
    # On Temporal a new run's source reads go to a worker, which holds the
    # action's credentials and reach; the launcher only decides their approval.
    defer = previous is None and replayed is None and _reads_sources(runtime.engine)
    if previous is not None:
        _check_inputs_read(verified.plan, previous)
        resolved = ResolvedInputs(previous.inputs, previous.launch_time)
    else:
        resolved = await _resolve(verified.plan, options, run_id, executor, router, replayed, defer)
    sources = (
        deferred_sources(verified.plan, options.approvals, options.settings, run_id)
        if defer
        else []
    )
    out_dir = options.out_dir or Path(
        (previous.options.get("out_dir") if previous else None)
        or data_dir() / "runs" / run_id / "outputs"
    )
    if previous is None:
        record = _start_run(
            runtime, router, verified, run_id, resolved, options, out_dir, replayed, code, sources
        )
    else:
        runtime.journal.set_run_status(run_id, "running")
        walker, cluster = _where(runtime.engine)
        if (previous.executor, previous.cluster) != (walker, cluster):
            runtime.journal.set_run_executor(run_id, walker, cluster)
        router.write(run_id, "launch.resume", {"plan": verified.plan.name, **code})
    options.on_event(LaunchEvent("run_started", run_id, detail={"plan": verified.plan.name}))
    scheduler = Scheduler(
        plan=verified.plan,
        run_id=run_id,
        inputs=resolved.values,
        launch_time=resolved.launch_time,
        executor=executor,
        journal=runtime.journal,
        audit=router,
        approvals=options.approvals,
        settings=options.settings,
        max_parallel=options.max_parallel,
        emit=options.on_event,
        replay=replay_outputs(runtime.journal, replayed, verified.content_hash),
    )
    if previous is not None:
        scheduler.state = memoised(runtime.journal, verified.plan, run_id)
        in_doubt(
            runtime.journal,
            verified.plan,
            run_id,
            scheduler.state,
            options.decisions,
            router.write,
        )
    if runtime.engine is not None:
        # The walk runs elsewhere and outlives this process: nothing to mark
        # interrupted here when the launcher stops.
        deferred = {"reads": sources, "record": record} if sources else None
        result = await runtime.engine.run(scheduler, verified, out_dir, deferred)
        if result.status == "running":  # detached: where to follow it
            audit_path = getattr(runtime.audit, "path", None)
            journal = runtime.journal
            result.journal = journal.path if journal.url is None else journal.location
            result.audit = str(audit_path) if audit_path is not None else None
    else:
        try:
            state = await scheduler.run()
        except BaseException:
            # Ctrl-C or cancellation: completed steps stay journaled; the run is resumable.
            runtime.journal.set_run_status(run_id, "interrupted")
            router.write(run_id, "launch.finish", {"status": "interrupted"})
            raise
        result = conclude(verified, run_id, state, out_dir, runtime.journal, runtime.audit, router)
    result.probes = [probe.to_dict() for probe in probes]
    result.warnings = [code["warning"]] if "warning" in code else []
    options.on_event(LaunchEvent("run_finished", run_id, status=result.status))
    return result


async def _verify_credentials(
    plan: FlightPlan, runtime: Runtime, router: AuditRouter, run_id: str, options: LaunchOptions
) -> list[ProbeResult]:
    def emit(probe: ProbeResult) -> None:
        detail = probe.to_dict()
        options.on_event(
            LaunchEvent("credential_probe", run_id, probe.action, probe.status, detail)
        )

    # A failed probe raises here: no run is created, its probe records stay audited.
    if runtime.engine is None:
        return await verify_credentials(plan, runtime.services, router, run_id, emit)
    # Where the steps run (a Temporal worker): the secrets and reach are there.
    results = await runtime.engine.verify_credentials(plan, run_id)
    for result in results:
        emit(result)
    check_probes(results)
    return results


def _check_approvals(plan: FlightPlan, approvals: Approvals) -> None:
    known = {step.id for step in plan.steps} | {f"inputs.{item.name}" for item in plan.inputs}
    unknown = sorted(approvals.approve - known - {"all"})
    if unknown:
        raise LaunchError(
            "approval.unknown_step",
            f"--approve names no step of this plan: {', '.join(unknown)}",
            hint="steps: " + ", ".join(step.id for step in plan.steps),
        )


def _where(engine: RunEngine | None) -> tuple[str, dict[str, Any] | None]:
    """What the journal records of where a run is walked."""
    return ("local", None) if engine is None else (engine.executor, engine.cluster())


def _reads_sources(engine: RunEngine | None) -> bool:
    return engine is not None and engine.reads_sources


def _check_inputs_read(plan: FlightPlan, previous: RunRow) -> None:
    """A Temporal run whose source read did not complete on a worker has no
    value for that input: it ran no step, and reading again on a resume could
    repeat a read that is not safe to retry, so it is launched anew instead."""
    unread = [
        item.name
        for item in plan.inputs
        if item.resolution.rule == "source" and item.name not in previous.inputs
    ]
    if unread:
        raise LaunchError(
            "resume.inputs_unread",
            f"run {previous.run_id} never finished reading its source input(s)"
            f" {', '.join(unread)}; no step of it ran",
            hint="see why (flightdeck runs show " + previous.run_id + "), then launch the plan"
            " again; a read that was in doubt may have been made once",
        )


def _previous(journal: Journal, run_id: str | None) -> RunRow | None:
    if run_id is None:
        return None
    row = journal.run(run_id)
    if row is None:
        raise LaunchError("resume.unknown_run", f"no run {run_id} in {journal.path}")
    return row


async def _resolve(
    plan: FlightPlan,
    options: LaunchOptions,
    run_id: str,
    executor: Executor,
    router: AuditRouter,
    replayed: RunRow | None,
    defer: bool,
) -> ResolvedInputs:
    if replayed is not None:
        return ResolvedInputs(dict(replayed.inputs), replayed.launch_time)

    async def read_source(item: Input) -> Any:
        task = source_task(plan, item, options.approvals, options.settings, run_id)
        outcome: StepOutcome = await executor.submit(task)
        for record in outcome.audit:
            router.write(run_id, record["kind"], record["fields"])
        if outcome.status != "completed":
            raise LaunchError.from_dict(outcome.error or {"message": "source read failed"})
        return outcome.result

    return await resolve_inputs(
        plan,
        options.inputs,
        clock=options.clock,
        prompt=options.input_prompt,
        read_source=read_source,
        defer_sources=defer,
    )


def _start_run(
    runtime: Runtime,
    router: AuditRouter,
    verified: VerifiedTarget,
    run_id: str,
    resolved: ResolvedInputs,
    options: LaunchOptions,
    out_dir: Path,
    replayed: RunRow | None,
    code: dict[str, Any],
    sources: list[dict[str, Any]],
) -> dict[str, Any]:
    """Record the new run; return its `launch.run` record, which the worker
    writes instead when it reads the run's sources (`sources`), once read."""
    flags = {
        "unsigned": verified.unsigned,
        "no_sandbox": options.settings.no_sandbox,
        "replay_of": replayed.run_id if replayed else None,
        "out_dir": str(out_dir),
        "max_parallel": options.max_parallel,
    }
    executor, cluster = _where(runtime.engine)
    record = {
        "plan": verified.plan.name,
        "version": verified.version,
        "content_hash": verified.content_hash,
        "signer": verified.signer,
        "publisher": verified.publisher,
        "launch_time": resolved.launch_time,
        "inputs": resolved.values,
        "source_reads": resolved.source_reads,
        **flags,
        **code,
        **image_record(verified.plan),
    }
    # With the PostgreSQL store the run's row and its `launch.run` record
    # commit together: a launcher killed between them leaves neither. With
    # SQLite they are two files, written row first.
    starter = AuditRouter(router.default, router.named, runtime.journal)
    with runtime.journal.batch() if starter.joins() else nullcontext():
        runtime.journal.create_run(
            run_id,
            plan_name=verified.plan.name or "?",
            plan_path=str(verified.path),
            content_hash=verified.content_hash,
            launch_time=resolved.launch_time,
            inputs=resolved.values,
            # The inputs a worker reads (`runs show`: pending until then).
            options=flags
            | ({"inputs_read_on_worker": [s["input"] for s in sources]} if sources else {}),
            executor=executor,
            cluster=cluster,
        )
        if not sources:
            starter.write(run_id, "launch.run", record)
    return record


def image_record(plan: FlightPlan) -> dict[str, Any]:
    """The image the lock pins, for the audit and the dry run: what launch
    boots and, for a composed image, its base and every Feature with its
    version and digest. Empty when the lock pins none."""
    lock = plan.lock
    if lock is None or not lock.resolved_images:
        return {}
    image = lock.resolved_images[0]
    record: dict[str, Any] = {"pinned": image.pinned}
    if image.features:
        record["composed_from"] = image.ref
        record["features"] = [
            {"tool": f.tool, "version": f.version, "feature": f.feature} for f in image.features
        ]
    return {"image": record}
