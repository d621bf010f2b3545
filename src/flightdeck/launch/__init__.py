"""Launch Flight Plans: verified, deterministic, enforced, audited, resumable.

    from flightdeck.launch import LaunchOptions, Runtime, StepServices, launch
    runtime = Runtime(StepServices(invoker, SecretStore()))
    result = await launch("weekly-metrics-digest@1.0.0", LaunchOptions(), runtime)

A launch verifies the plan, resolves inputs once, walks the step graph
through an `Executor` (`LocalExecutor` by default) with the trust contract
enforced around every action call, materializes the declared outputs, and
journals and audits everything. Errors are `LaunchError` values with a code.

The bound credential reaches an SDK driver as
`${secrets.FLIGHTDECK_CREDENTIAL}` with `context.credential = {kind,
placement, identityLabel, reference, secret}`;
`LaunchOptions(verify_credentials=True)` runs each contract's verification
probe first (`ProbeResult`). The trust contract's hosts are enforced by
`flightdeck.guard`; `EgressDenied`, `EgressPolicy` and `guard` are that
package's `Refused`, `Policy` and `active`.
"""

from flightdeck.guard import Policy as EgressPolicy
from flightdeck.guard import Refused as EgressDenied
from flightdeck.guard import active as guard
from flightdeck.launch._approval import Approvals
from flightdeck.launch._audit import AuditRouter, sink_from_spec
from flightdeck.launch._conclude import RunResult
from flightdeck.launch._drivers import DriverInvoker
from flightdeck.launch._errors import LaunchError
from flightdeck.launch._events import LaunchEvent
from flightdeck.launch._executor import Executor, LocalExecutor, execute_step
from flightdeck.launch._inputs import ResolvedInputs, resolve_inputs
from flightdeck.launch._invoker import (
    ActionCall,
    ActionFailed,
    ActionInfo,
    ActionInvoker,
    HandlerInvoker,
    ProbingInvoker,
)
from flightdeck.launch._journal import Journal, RunRow, StepRow
from flightdeck.launch._launch import LaunchOptions, Runtime, launch, verify_target
from flightdeck.launch._paths import rewrite, select
from flightdeck.launch._probe import ProbeResult
from flightdeck.launch._redact import redact
from flightdeck.launch._report import run_list, run_report
from flightdeck.launch._sandbox import bwrap_path
from flightdeck.launch._secrets import Credential, SecretStore
from flightdeck.launch._services import StepServices, provider_from_settings
from flightdeck.launch._setup import configured_runtime, configured_settings
from flightdeck.launch._task import StepOutcome, StepSettings, StepTask
from flightdeck.launch._transforms import (
    TransformContext,
    get_transform,
    register_transform,
    transform_names,
)

__all__ = [
    "ActionCall",
    "ActionFailed",
    "ActionInfo",
    "ActionInvoker",
    "Approvals",
    "AuditRouter",
    "Credential",
    "DriverInvoker",
    "EgressDenied",
    "EgressPolicy",
    "Executor",
    "HandlerInvoker",
    "Journal",
    "LaunchError",
    "LaunchEvent",
    "LaunchOptions",
    "LocalExecutor",
    "ProbeResult",
    "ProbingInvoker",
    "ResolvedInputs",
    "RunResult",
    "RunRow",
    "Runtime",
    "SecretStore",
    "StepOutcome",
    "StepRow",
    "StepServices",
    "StepSettings",
    "StepTask",
    "TransformContext",
    "bwrap_path",
    "configured_runtime",
    "configured_settings",
    "execute_step",
    "get_transform",
    "guard",
    "launch",
    "provider_from_settings",
    "redact",
    "register_transform",
    "resolve_inputs",
    "rewrite",
    "run_list",
    "run_report",
    "select",
    "sink_from_spec",
    "transform_names",
    "verify_target",
]
