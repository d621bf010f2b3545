"""`launch --dry-run`: everything a launch would decide, with nothing done.

The same checks a launch makes before its first step, in the same order:
verification (against a throwaway copy of the trust state, so a dry run
never moves the high-water mark or pins a publisher), approvals named on the
command line, the code pins, the steps against their drivers and tools
(`check_actions`), the inputs (literal and dynamic ones resolved; a source
read is shown as the call it would make, never made), each action's
credential (found or missing, never its value) and approval decision, and
the environment each tool step would run in. No run id, no journal row, no
audit record, no output directory, no network.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from flightdeck.flightplan import FlightPlan, FlightPlanError, Input, TrustState
from flightdeck.launch._drivers import DriverInvoker
from flightdeck.launch._inputs import resolve_inputs
from flightdeck.launch._launch import LaunchOptions, image_record, verify_target
from flightdeck.launch._pins import check_code
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.engine._runtime import Runtime
from flightdeck.launch.engine._target import VerifiedTarget

SOURCE_READ = "<read at launch>"


@dataclass
class DryRun:
    plan: str
    version: str | None
    content_hash: str
    signed: bool
    publisher: str | None
    signer: str | None
    code: dict[str, Any]
    inputs: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)
    # The image the lock pins (a composed one with its base and Features).
    image: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "dry_run": True,
            "plan": self.plan,
            "version": self.version,
            "content_hash": self.content_hash,
            "signed": self.signed,
            "publisher": self.publisher,
            "signer": self.signer,
            "code": self.code,
            "inputs": self.inputs,
            "steps": self.steps,
            "problems": self.problems,
            "image": self.image,
        }


def _verify_without_recording(target: str | Path, options: LaunchOptions, runtime: Runtime) -> Any:
    """Verify as launch does, against a copy of the trust state (trust.json,
    or the store's) in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="flightdeck-dry-run-") as scratch:
        try:
            copy = TrustState().snapshot(Path(scratch) / "trust.json")
        except FlightPlanError as exc:  # a damaged trust state, a store that is down
            raise LaunchError(exc.code, exc.message, hint=exc.hint) from None
        return verify_target(target, options.unsigned, replace(runtime, trust=copy))


def _credential(plan: FlightPlan, ref: str, runtime: Runtime) -> dict[str, Any]:
    requirement = plan.action(ref)
    contract = requirement.trust_contract if requirement else None
    if contract is None or contract.credential_kind in (None, "none"):
        return {"kind": "none"}
    connector = ref.removeprefix("aileron:").partition(".")[0]
    try:
        found = runtime.services.secrets.lookup(
            connector, contract.credential_kind or "", contract.identity_label, contract.placement
        )
    except LaunchError as exc:
        return {"kind": contract.credential_kind, "found": False, "problem": exc.message}
    return {"kind": contract.credential_kind, "found": True, "reference": found.reference}


def _action_step(
    plan: FlightPlan, step_id: str, ref: str, options: LaunchOptions, runtime: Runtime
) -> dict[str, Any]:
    requirement = plan.action(ref)
    effect = (
        requirement.trust_contract.effect if requirement and requirement.trust_contract else None
    )
    decision = options.approvals.decide(step_id, ref, effect)
    out: dict[str, Any] = {"action_ref": ref, "effect": effect, "approval": decision}
    invoker = runtime.services.invoker
    if isinstance(invoker, DriverInvoker):
        connector, _, action = ref.removeprefix("aileron:").partition(".")
        info = (
            invoker.describe(connector, action) if invoker.implements(connector, action) else None
        )
        if info is not None:
            out["driver"] = info.manifest_version
            out["code_digest"] = info.connector_hash
    out["credential"] = _credential(plan, ref, runtime)
    return out


def _source_read(
    plan: FlightPlan, item: Input, options: LaunchOptions, runtime: Runtime
) -> dict[str, Any]:
    ref = item.resolution.source_action_ref or ""
    step_id = f"inputs.{item.name}"
    return {
        "id": step_id,
        "kind": "source-read",
        "after": [],
        **_action_step(plan, step_id, ref, options, runtime),
    }


def _steps(
    verified: VerifiedTarget, options: LaunchOptions, runtime: Runtime
) -> list[dict[str, Any]]:
    plan = verified.plan
    lock = plan.lock
    image = lock.resolved_images[0].pinned if lock and lock.resolved_images else None
    steps: list[dict[str, Any]] = []
    for step in plan.steps:
        entry: dict[str, Any] = {
            "id": step.id,
            "kind": step.kind,
            "after": list(step.dependencies()),
        }
        if step.kind == "action-call" and step.action_ref:
            entry.update(_action_step(plan, step.id, step.action_ref, options, runtime))
        elif step.kind == "tool":
            from flightdeck.launch.sandbox._tool_step import _environment

            entry["command"] = list(step.command)
            # The words the step's audit record will use (a sandbox is assumed
            # present; launch refuses a tool step without one unless --no-sandbox).
            sandbox = None if options.settings.no_sandbox else "bwrap"
            entry["environment"] = _environment(image, sandbox)
            hosts = step.trust_contract.hosts if step.trust_contract else ()
            entry["network"] = list(hosts) or "none"
        steps.append(entry)
    return steps


async def dry_run(target: str | Path | None, options: LaunchOptions, runtime: Runtime) -> DryRun:
    """What `launch(target, options, runtime)` would do. Raises `LaunchError`
    for what launch would refuse before running anything (verification, the
    code pins, unknown or missing inputs); everything else is a problem in
    the report."""
    if target is None:
        raise LaunchError("launch.no_target", "name a plan (NAME[@VERSION] or PATH)")
    if options.resume:
        raise LaunchError("launch.dry_run_resume", "--dry-run shows a new launch, not a resume")
    verified = _verify_without_recording(target, options, runtime)
    from flightdeck.launch._launch import _check_approvals

    _check_approvals(verified.plan, options.approvals)
    code = check_code(verified.plan, runtime.services.invoker)

    plan = verified.plan
    sources = [item for item in plan.inputs if item.resolution.rule == "source"]
    # Source reads are action calls: shown, never made.
    others = replace(plan, inputs=tuple(i for i in plan.inputs if i not in sources))
    resolved = await resolve_inputs(
        others, options.inputs, clock=options.clock, prompt=options.input_prompt
    )
    values = dict(resolved.values)
    for item in sources:
        values[item.name] = f"{SOURCE_READ} {item.resolution.source_action_ref}"
    report = DryRun(
        plan=verified.plan.name or "?",
        version=verified.version,
        content_hash=verified.content_hash,
        signed=not verified.unsigned,
        publisher=verified.publisher,
        signer=verified.signer,
        code=code,
        inputs={item.name: values[item.name] for item in plan.inputs},
        steps=[_source_read(plan, item, options, runtime) for item in sources]
        + _steps(verified, options, runtime),
        image=image_record(plan).get("image"),
    )
    invoker = runtime.services.invoker
    if isinstance(invoker, DriverInvoker):
        report.problems += [d.to_dict() for d in invoker.check_plan(verified.plan)]
    for step in report.steps:
        credential = step.get("credential") or {}
        if credential.get("found") is False:
            report.problems.append(
                {"code": "credential.missing", "message": credential["problem"], "step": step["id"]}
            )
    return report
