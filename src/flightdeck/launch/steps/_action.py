"""Run one action call under its trust contract.

Around the invoker's call: the credential is bound from the secret store
(by `credential.kind` and `identityLabel`) before the call, and handed to it
with its declared `kind` and `placement` (`credential.missing` fails the
step first when the store has none; `kind: none` binds nothing), the call runs under the egress
guard for the contract's `hosts`, transient failures are retried with
exponential backoff only when `idempotency.safeToRetry` (each try audited
as it ends; the bound is `[launch] max_tries` / `backoff_seconds`),
`idempotencyKey: true` passes a key derived from run and step (the same on
resume), and `redaction` rules apply before the result enters the graph or
the audit. Approval was decided by the scheduler before dispatch. Everything
returned is scrubbed of the credential value.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import threading
from collections.abc import Callable
from typing import Any

from flightdeck.flightplan import TrustContract
from flightdeck.guard import Policy, Refused, active
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._invoker import ActionCall, ActionFailed, ActionInfo
from flightdeck.launch.core._secrets import Credential, Scrubber
from flightdeck.launch.core._services import StepServices
from flightdeck.launch.core._task import StepOutcome, StepTask, split_outputs
from flightdeck.launch.core._values import summarize, to_plain, value_hash
from flightdeck.launch.steps._redact import redact

# Where a try's audit record goes as the try ends: (run id, kind, fields).
TryRecorder = Callable[[str, str, dict[str, Any]], None]


def idempotency_key(run_id: str, step_id: str) -> str:
    """Stable across resumes of one run: the run id and step id, hashed."""
    return "fd-" + hashlib.sha256(f"{run_id}\0{step_id}".encode()).hexdigest()[:32]


# Contracts read so far, by the identity of the dict a task carries (the
# scheduler gives every call of one action in a run the same dict): reading
# one costs ~10 us, a third of a call's own work. An entry holds the dict (so
# its id is not reused) and a copy of it; it is used only while the dict
# still equals that copy, so a contract changed in place is read again.
_CONTRACTS: dict[int, tuple[dict[str, Any], dict[str, Any], TrustContract | None]] = {}
_MAX_CONTRACTS = 64
_CONTRACTS_LOCK = threading.Lock()


def read_contract(raw: dict[str, Any]) -> TrustContract | None:
    """`TrustContract.read(raw)`, remembered for the same unchanged dict."""
    entry = _CONTRACTS.get(id(raw))
    if entry is not None and entry[0] is raw and entry[1] == raw:
        return entry[2]
    contract = TrustContract.read(raw)
    with _CONTRACTS_LOCK:  # a worker may run calls in several threads
        if len(_CONTRACTS) >= _MAX_CONTRACTS:
            del _CONTRACTS[next(iter(_CONTRACTS))]  # the oldest
        _CONTRACTS[id(raw)] = (raw, copy.deepcopy(raw), contract)
    return contract


def parse_ref(ref: str) -> tuple[str, str]:
    body = ref.removeprefix("aileron:")
    connector, _, action = body.partition(".")
    if not ref.startswith("aileron:") or not connector or not action:
        raise LaunchError("action.bad_ref", f"not an aileron:<connector>.<action> ref: {ref}")
    return connector, action


async def run_action(
    task: StepTask, services: StepServices, record: TryRecorder | None = None
) -> StepOutcome:
    """Run the call. With `record`, each try's audit record is written as the
    try ends (a kill mid-retry keeps the tries so far); without it, the
    records travel back in the outcome."""
    scrubber = Scrubber()
    audit: list[dict[str, Any]] = []

    def keep(entry: dict[str, Any]) -> None:
        clean = scrubber.data(entry)
        if record is None:
            audit.append(clean)
        else:
            record(task.run_id, clean["kind"], clean["fields"])

    try:
        result, attempts = await _call(task, services, scrubber, keep)
        outputs = split_outputs(list(task.step.get("outputs", [])), result)
    except LaunchError as exc:
        exc.step = exc.step or task.step_id
        error = scrubber.data(exc.to_dict())
        return StepOutcome("failed", error=error, audit=audit)
    return StepOutcome(
        "completed",
        result=result,
        outputs=outputs,
        attempts=attempts,
        audit=audit,
    )


def bind_credential(
    contract: TrustContract, connector: str, services: StepServices, scrubber: Scrubber
) -> Credential | None:
    """The contract's credential from the secret store (None for kind `none`),
    looked up before any call; its value is remembered by the scrubber."""
    kind = contract.credential_kind
    if kind in (None, "none"):
        return None
    credential = services.secrets.lookup(
        connector, kind, contract.identity_label, contract.placement
    )
    scrubber.add(credential.value)
    return credential


def action_call(
    task: StepTask, contract: TrustContract, connector: str, action: str, bound: Credential | None
) -> ActionCall:
    return ActionCall(
        connector=connector,
        action=action,
        args=task.values,
        credential=bound.value if bound else None,
        credential_kind=contract.credential_kind,
        identity_label=contract.identity_label,
        idempotency_key=idempotency_key(task.run_id, task.step_id)
        if contract.idempotency_key
        else None,
        run_id=task.run_id,
        step_id=task.step_id,
        credential_placement=bound.placement if bound else None,
        credential_reference=bound.reference if bound else None,
    )


async def guarded_call(
    call: ActionCall,
    contract: TrustContract,
    services: StepServices,
    scrubber: Scrubber,
    step_id: str,
) -> tuple[Any, LaunchError | None, list[str]]:
    """One try under the contract's egress layer: the redacted, scrubbed
    result (or the error) and the hosts contacted."""
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
        error = LaunchError("egress_denied", str(exc), step=step_id)
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
            step=step_id,
        )
    return result, error, list(policy.contacted)


async def _call(
    task: StepTask,
    services: StepServices,
    scrubber: Scrubber,
    keep: Callable[[dict[str, Any]], None],
) -> tuple[Any, int]:
    contract = read_contract(task.contract or {})
    if contract is None:
        raise LaunchError("action.no_contract", f"{task.step.get('actionRef')} has no contract")
    connector, action = parse_ref(str(task.step.get("actionRef", "")))
    info = services.invoker.describe(connector, action)
    credential = bind_credential(contract, connector, services, scrubber)
    call = action_call(task, contract, connector, action, credential)
    attempts = max(task.settings.retry_attempts, 1) if contract.safe_to_retry else 1
    for attempt in range(1, attempts + 1):
        result, error, contacted = await guarded_call(
            call, contract, services, scrubber, task.step_id
        )
        keep(_record(task, contract, info, credential, call, contacted, attempt, result, error))
        if error is None:
            return result, attempt
        if not (error.transient and attempt < attempts):
            raise error
        await asyncio.sleep(task.settings.retry_base_delay * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


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
    `audit.fields` declares, plus where it happened. Each field is computed
    only when declared (hashes and summaries cost a few µs per call)."""
    available: dict[str, Callable[[], Any]] = {
        "connector-hash": lambda: info.connector_hash,
        "action-manifest-version": lambda: info.manifest_version,
        "credential-binding": lambda: credential.reference if credential else "none",
        "identity-label": lambda: contract.identity_label,
        "approved-input": lambda: {
            "sha256": value_hash(dict(call.args)),
            "summary": summarize(call.args),
        },
        "approval-decision": lambda: task.approval,
        "network-target": lambda: list(contacted),
        "operation-effect": lambda: contract.effect,
        "request-summary": lambda: f"{call.ref} {summarize(call.args)}",
        "response-summary": lambda: summarize(result) if error is None else error.message,
        "result": lambda: "ok" if error is None else f"error:{error.code}",
    }
    fields: dict[str, Any] = {
        "step": task.step_id,
        "action_ref": call.ref,
        "attempt": attempt,
        "idempotency_key": call.idempotency_key,
        "sink": contract.audit_sink,
    }
    fields.update({name: available[name]() for name in contract.audit_fields if name in available})
    return {"kind": "launch.action_call", "fields": fields}
