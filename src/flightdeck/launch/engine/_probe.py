"""Credential verification probes (`flightdeck launch --verify-credentials`).

Seed 003: a trust contract's `verification` is "a read-only probe the
runtime can call to confirm the credential still works", `{method, path}`
on a declared host. An in-process SDK driver has no HTTP surface for the
runtime to aim a method and path at, so a probe maps to a tool the driver
implements (docs/decisions.md, "Launch: credentials and verification"):

1. `<action>.verify` (per action; `_` written `-` like any action), else
2. `verification` (one probe tool for the whole connector),

called with the probe itself as input (`{"method": "GET", "path": "/me"}`)
under the same contract as the action: the credential bound from the
secret store, the egress layer for the contract's `hosts`, the scrubber.
A probe passes when the call returns and its result is neither `false` nor
an object whose `ok` is `false`. Each probe is audited
(`launch.credential_probe`); a failed one fails the launch with
`credential.verification_failed` naming the action; a declared probe no
implementation can run is a warning (audited, `result: unrunnable`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flightdeck.flightplan import FlightPlan, TrustContract
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._invoker import ActionCall, ProbingInvoker
from flightdeck.launch.core._secrets import Scrubber
from flightdeck.launch.core._services import StepServices
from flightdeck.launch.engine._audit import AuditRouter
from flightdeck.launch.steps._action import bind_credential, guarded_call, parse_ref

PROBE_TOOLS = ("{action}.verify", "verification")


@dataclass(frozen=True)
class ProbeResult:
    action: str  # the action ref
    status: str  # ok | failed | unrunnable
    message: str
    tool: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "status": self.status,
            "message": self.message,
            "tool": self.tool,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbeResult:
        """Read back `to_dict` (a probe run on a Temporal worker)."""
        tool = data.get("tool")
        return cls(
            str(data["action"]),
            str(data["status"]),
            str(data["message"]),
            None if tool is None else str(tool),
        )


def probe_tool(services: StepServices, connector: str, action: str) -> str | None:
    """The action name of the probe the invoker implements, or None."""
    invoker = services.invoker
    if not isinstance(invoker, ProbingInvoker):
        return None
    for pattern in PROBE_TOOLS:
        name = pattern.format(action=action)
        for candidate in dict.fromkeys((name, name.replace("_", "-"))):
            if invoker.implements(connector, candidate):
                return candidate
    return None


async def verify_credentials(
    plan: FlightPlan,
    services: StepServices,
    router: AuditRouter,
    run_id: str,
    emit: Callable[[ProbeResult], None] = lambda _: None,
) -> list[ProbeResult]:
    """Run every declared probe, in declaration order; all are run, audited
    and emitted, then the first failure is raised."""
    results = await run_probes(plan, services, router, run_id)
    for result in results:
        emit(result)
    check_probes(results)
    return results


async def run_probes(
    plan: FlightPlan, services: StepServices, router: AuditRouter, run_id: str
) -> list[ProbeResult]:
    """Every declared probe's result, each audited as it ends; none raises
    (where the probes run on a worker, the launcher decides: `check_probes`)."""
    results: list[ProbeResult] = []
    for requirement in plan.requires:
        contract = requirement.trust_contract
        probe = contract.raw.get("verification") if contract is not None else None
        if contract is None or not isinstance(probe, dict):
            continue
        results.append(await _probe(requirement.ref, contract, probe, services, router, run_id))
    return results


def check_probes(results: Sequence[ProbeResult]) -> None:
    """Raise `credential.verification_failed` for the first failed probe."""
    failed = [result for result in results if result.status == "failed"]
    if failed:
        first = failed[0]
        raise LaunchError(
            "credential.verification_failed",
            f"the credential probe of {first.action} failed: {first.message}",
            hint="re-bind the credential in the secret store (or check the upstream), then"
            " launch again",
        )


async def _probe(
    ref: str,
    contract: TrustContract,
    probe: dict[str, Any],
    services: StepServices,
    router: AuditRouter,
    run_id: str,
) -> ProbeResult:
    scrubber = Scrubber()
    fields: dict[str, Any] = {
        "action": ref,
        "probe": {"method": probe.get("method"), "path": probe.get("path")},
        "identity-label": contract.identity_label,
        "sink": contract.audit_sink,
    }
    try:
        result = await _run(ref, contract, probe, services, scrubber, fields, run_id)
    except LaunchError as exc:  # an unreadable ref or a missing credential
        result = ProbeResult(ref, "failed", scrubber.text(f"{exc.message} [{exc.code}]"))
        fields["result"] = f"error:{exc.code}"
    fields["tool"] = result.tool
    router.write(run_id, "launch.credential_probe", scrubber.data(fields))
    return result


async def _run(
    ref: str,
    contract: TrustContract,
    probe: dict[str, Any],
    services: StepServices,
    scrubber: Scrubber,
    fields: dict[str, Any],
    run_id: str,
) -> ProbeResult:
    connector, action = parse_ref(ref)
    tool = probe_tool(services, connector, action)
    if tool is None:
        fields["result"] = "unrunnable"
        names = ", ".join(p.format(action=action) for p in PROBE_TOOLS)
        return ProbeResult(
            ref, "unrunnable", f"no implementation of {connector} runs a probe (looked for {names})"
        )
    credential = bind_credential(contract, connector, services, scrubber)
    fields["credential-binding"] = credential.reference if credential else "none"
    call = ActionCall(
        connector=connector,
        action=tool,
        args={"method": probe.get("method"), "path": probe.get("path")},
        credential=credential.value if credential else None,
        credential_kind=contract.credential_kind,
        identity_label=contract.identity_label,
        run_id=run_id,
        step_id=f"verify.{action}",
        credential_placement=credential.placement if credential else None,
        credential_reference=credential.reference if credential else None,
    )
    value, error, contacted = await guarded_call(call, contract, services, scrubber, call.step_id)
    fields["network-target"] = contacted
    if error is not None:
        fields["result"] = f"error:{error.code}"
        return ProbeResult(ref, "failed", f"{error.message} [{error.code}]", tool)
    if value is False or (isinstance(value, dict) and value.get("ok") is False):
        fields["result"] = "error:probe_rejected"
        return ProbeResult(ref, "failed", "the probe reported the credential does not work", tool)
    fields["result"] = "ok"
    return ProbeResult(ref, "ok", "the credential works", tool)
