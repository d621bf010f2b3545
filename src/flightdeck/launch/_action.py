"""Run one action call under its trust contract.

Around the invoker's call: the credential is bound from the secret store
(by `credential.kind` and `identityLabel`), the call runs under the egress
guard for the contract's `hosts`, transient failures are retried with
exponential backoff only when `idempotency.safeToRetry` (each try audited),
`idempotencyKey: true` passes a key derived from run and step (the same on
resume), and `redaction` rules apply before the result enters the graph or
the audit. Approval was decided by the scheduler before dispatch. Everything
returned is scrubbed of the credential value.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from flightdeck.flightplan import TrustContract
from flightdeck.guard import Policy, Refused, active
from flightdeck.launch._errors import LaunchError
from flightdeck.launch._invoker import ActionCall, ActionFailed, ActionInfo
from flightdeck.launch._redact import redact
from flightdeck.launch._secrets import Credential, Scrubber
from flightdeck.launch._services import StepServices
from flightdeck.launch._task import StepOutcome, StepTask, split_outputs
from flightdeck.launch._values import summarize, to_plain, value_hash


def idempotency_key(run_id: str, step_id: str) -> str:
    """Stable across resumes of one run: the run id and step id, hashed."""
    return "fd-" + hashlib.sha256(f"{run_id}\0{step_id}".encode()).hexdigest()[:32]


def parse_ref(ref: str) -> tuple[str, str]:
    body = ref.removeprefix("aileron:")
    connector, _, action = body.partition(".")
    if not ref.startswith("aileron:") or not connector or not action:
        raise LaunchError("action.bad_ref", f"not an aileron:<connector>.<action> ref: {ref}")
    return connector, action


async def run_action(task: StepTask, services: StepServices) -> StepOutcome:
    scrubber = Scrubber()
    audit: list[dict[str, Any]] = []
    try:
        result, attempts = await _call(task, services, scrubber, audit)
        outputs = split_outputs(list(task.step.get("outputs", [])), result)
    except LaunchError as exc:
        exc.step = exc.step or task.step_id
        error = scrubber.data(exc.to_dict())
        return StepOutcome("failed", error=error, audit=scrubber.data(audit))
    return StepOutcome(
        "completed",
        result=result,
        outputs=outputs,
        attempts=attempts,
        audit=scrubber.data(audit),
    )


async def _call(
    task: StepTask, services: StepServices, scrubber: Scrubber, audit: list[dict[str, Any]]
) -> tuple[Any, int]:
    contract = TrustContract.read(task.contract or {})
    if contract is None:
        raise LaunchError("action.no_contract", f"{task.step.get('actionRef')} has no contract")
    ref = str(task.step.get("actionRef", ""))
    connector, action = parse_ref(ref)
    info = services.invoker.describe(connector, action)
    credential = _credential(contract, connector, services)
    if credential is not None:
        scrubber.add(credential.value)
    call = ActionCall(
        connector=connector,
        action=action,
        args=task.values,
        credential=credential.value if credential else None,
        credential_kind=contract.credential_kind,
        identity_label=contract.identity_label,
        idempotency_key=idempotency_key(task.run_id, task.step_id)
        if contract.idempotency_key
        else None,
        run_id=task.run_id,
        step_id=task.step_id,
    )
    attempts = task.settings.retry_attempts if contract.safe_to_retry else 1
    for attempt in range(1, max(attempts, 1) + 1):
        policy = Policy.allow_hosts(
            contract.hosts, owner="egress denied", limit="the trust contract hosts"
        )
        error: LaunchError | None = None
        result: Any = None
        try:
            with active(policy):
                raw = await services.invoker.invoke(call)
            result = scrubber.data(redact(to_plain(raw), contract.redaction))
        except Refused as exc:  # this contract's layer or a driver's inside it
            error = LaunchError("egress_denied", str(exc), step=task.step_id)
        except ActionFailed as exc:
            error = LaunchError(exc.code, scrubber.text(str(exc)), transient=exc.transient)
        except LaunchError as exc:
            error = exc
        except Exception as exc:  # the action's own failure, wrapped with its type
            error = LaunchError("action.failed", scrubber.text(f"{type(exc).__name__}: {exc}"))
        if policy.denied and (error is None or error.code != "egress_denied"):
            # The action swallowed the refusal; the step still fails, naming the host.
            error = LaunchError(
                "egress_denied",
                f"egress denied: a connection to {policy.denied[0].target} is outside the trust"
                " contract hosts",
                step=task.step_id,
            )
        audit.append(
            _record(
                task, contract, info, credential, call, policy.contacted, attempt, result, error
            )
        )
        if error is None:
            return result, attempt
        if not (error.transient and contract.safe_to_retry and attempt < attempts):
            raise error
        await asyncio.sleep(task.settings.retry_base_delay * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


def _credential(
    contract: TrustContract, connector: str, services: StepServices
) -> Credential | None:
    kind = contract.credential_kind
    if kind in (None, "none"):
        return None
    return services.secrets.lookup(connector, kind, contract.identity_label)


def _record(
    task: StepTask,
    contract: TrustContract,
    info: ActionInfo,
    credential: Credential | None,
    call: ActionCall,
    contacted: list[str],
    attempt: int,
    result: Any,
    error: LaunchError | None,
) -> dict[str, Any]:
    """The `launch.action_call` record: every closed field the contract's
    `audit.fields` declares, plus where it happened."""
    available: dict[str, Any] = {
        "connector-hash": info.connector_hash,
        "action-manifest-version": info.manifest_version,
        "credential-binding": credential.reference if credential else "none",
        "identity-label": contract.identity_label,
        "approved-input": {"sha256": value_hash(dict(call.args)), "summary": summarize(call.args)},
        "approval-decision": task.approval,
        "network-target": list(contacted),
        "operation-effect": contract.effect,
        "request-summary": f"{call.ref} {summarize(call.args)}",
        "response-summary": summarize(result) if error is None else error.message,
        "result": "ok" if error is None else f"error:{error.code}",
    }
    fields: dict[str, Any] = {
        "step": task.step_id,
        "actionRef": call.ref,
        "attempt": attempt,
        "idempotencyKey": call.idempotency_key,
        "sink": contract.audit_sink,
    }
    fields.update({name: available[name] for name in contract.audit_fields if name in available})
    return {"kind": "launch.action_call", "fields": fields}
