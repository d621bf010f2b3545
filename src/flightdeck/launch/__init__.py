"""Launch Flight Plans: verified, deterministic, enforced, audited, resumable.

    from flightdeck.launch import LaunchOptions, Runtime, StepServices, launch
    runtime = Runtime(StepServices(invoker, SecretStore()))
    result = await launch("weekly-metrics-digest@1.0.0", LaunchOptions(), runtime)

A launch verifies the plan, resolves inputs once, walks the step graph
through an `Executor` (`LocalExecutor` by default) with the trust contract
enforced around every action call, materializes the declared outputs, and
journals and audits everything. Errors are `LaunchError` values with a code.
`Runtime(engine=TemporalEngine(ADDRESS))` walks the graph as a Temporal
workflow instead, its steps run by `run_worker` processes (the `temporal`
extra; temporalio is imported only on that path).

The bound credential reaches an SDK driver as
`${secrets.FLIGHTDECK_CREDENTIAL}` with `context.credential = {kind,
placement, identityLabel, reference, secret}`;
`LaunchOptions(verify_credentials=True)` runs each contract's verification
probe first (`ProbeResult`). The trust contract's hosts are enforced by
`flightdeck.guard`; `EgressDenied`, `EgressPolicy` and `guard` are that
package's `Refused`, `Policy` and `active`.
"""

import typing as _typing

from flightdeck._lazy import LazyNames as _LazyNames

# The names below are imported on first use (PEP 562), so importing one
# submodule does not import the whole package. Helpers keep a leading
# underscore so the public names stay exactly `__all__`.
if _typing.TYPE_CHECKING:
    from flightdeck.guard import Policy as EgressPolicy
    from flightdeck.guard import Refused as EgressDenied
    from flightdeck.guard import active as guard
    from flightdeck.launch._approval import Approvals
    from flightdeck.launch._audit import AuditRouter, sink_from_spec
    from flightdeck.launch._conclude import RunResult
    from flightdeck.launch._drivers import DriverInvoker
    from flightdeck.launch._dryrun import DryRun, dry_run
    from flightdeck.launch._errors import LaunchError
    from flightdeck.launch._events import LaunchEvent
    from flightdeck.launch._executor import Executor, LocalExecutor, execute_step
    from flightdeck.launch._image_cache import ImageCache
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
    from flightdeck.launch._pins import frozen_workspace
    from flightdeck.launch._preflight import check_actions
    from flightdeck.launch._probe import ProbeResult
    from flightdeck.launch._redact import redact
    from flightdeck.launch._report import run_list, run_report
    from flightdeck.launch._resume import ResumeDecisions
    from flightdeck.launch._route import route as route_run
    from flightdeck.launch._sandbox import bwrap_path
    from flightdeck.launch._secrets import Credential, SecretStore
    from flightdeck.launch._services import StepServices, provider_from_settings
    from flightdeck.launch._setup import (
        TemporalSettings,
        code_resolver,
        configured_runtime,
        configured_settings,
        configured_temporal,
    )
    from flightdeck.launch._task import StepOutcome, StepSettings, StepTask
    from flightdeck.launch._temporal_client import (
        TemporalEngine,
        describe_run,
        signal_approval,
        wait_for_run,
    )
    from flightdeck.launch._temporal_worker import run_worker
    from flightdeck.launch._transforms import (
        TransformContext,
        get_transform,
        register_transform,
        transform_names,
    )

_LAZY: dict[str, tuple[str, str]] = {
    "EgressPolicy": ("flightdeck.guard", "Policy"),
    "EgressDenied": ("flightdeck.guard", "Refused"),
    "guard": ("flightdeck.guard", "active"),
    "Approvals": ("flightdeck.launch._approval", "Approvals"),
    "AuditRouter": ("flightdeck.launch._audit", "AuditRouter"),
    "sink_from_spec": ("flightdeck.launch._audit", "sink_from_spec"),
    "RunResult": ("flightdeck.launch._conclude", "RunResult"),
    "DriverInvoker": ("flightdeck.launch._drivers", "DriverInvoker"),
    "LaunchError": ("flightdeck.launch._errors", "LaunchError"),
    "LaunchEvent": ("flightdeck.launch._events", "LaunchEvent"),
    "Executor": ("flightdeck.launch._executor", "Executor"),
    "LocalExecutor": ("flightdeck.launch._executor", "LocalExecutor"),
    "execute_step": ("flightdeck.launch._executor", "execute_step"),
    "ImageCache": ("flightdeck.launch._image_cache", "ImageCache"),
    "ResolvedInputs": ("flightdeck.launch._inputs", "ResolvedInputs"),
    "resolve_inputs": ("flightdeck.launch._inputs", "resolve_inputs"),
    "ActionCall": ("flightdeck.launch._invoker", "ActionCall"),
    "ActionFailed": ("flightdeck.launch._invoker", "ActionFailed"),
    "ActionInfo": ("flightdeck.launch._invoker", "ActionInfo"),
    "ActionInvoker": ("flightdeck.launch._invoker", "ActionInvoker"),
    "HandlerInvoker": ("flightdeck.launch._invoker", "HandlerInvoker"),
    "ProbingInvoker": ("flightdeck.launch._invoker", "ProbingInvoker"),
    "Journal": ("flightdeck.launch._journal", "Journal"),
    "RunRow": ("flightdeck.launch._journal", "RunRow"),
    "StepRow": ("flightdeck.launch._journal", "StepRow"),
    "LaunchOptions": ("flightdeck.launch._launch", "LaunchOptions"),
    "Runtime": ("flightdeck.launch._launch", "Runtime"),
    "launch": ("flightdeck.launch._launch", "launch"),
    "verify_target": ("flightdeck.launch._launch", "verify_target"),
    "frozen_workspace": ("flightdeck.launch._pins", "frozen_workspace"),
    "rewrite": ("flightdeck.launch._paths", "rewrite"),
    "select": ("flightdeck.launch._paths", "select"),
    "ProbeResult": ("flightdeck.launch._probe", "ProbeResult"),
    "redact": ("flightdeck.launch._redact", "redact"),
    "run_list": ("flightdeck.launch._report", "run_list"),
    "run_report": ("flightdeck.launch._report", "run_report"),
    "ResumeDecisions": ("flightdeck.launch._resume", "ResumeDecisions"),
    "route_run": ("flightdeck.launch._route", "route"),
    "bwrap_path": ("flightdeck.launch._sandbox", "bwrap_path"),
    "Credential": ("flightdeck.launch._secrets", "Credential"),
    "SecretStore": ("flightdeck.launch._secrets", "SecretStore"),
    "StepServices": ("flightdeck.launch._services", "StepServices"),
    "provider_from_settings": ("flightdeck.launch._services", "provider_from_settings"),
    "code_resolver": ("flightdeck.launch._setup", "code_resolver"),
    "check_actions": ("flightdeck.launch._preflight", "check_actions"),
    "DryRun": ("flightdeck.launch._dryrun", "DryRun"),
    "dry_run": ("flightdeck.launch._dryrun", "dry_run"),
    "configured_runtime": ("flightdeck.launch._setup", "configured_runtime"),
    "configured_settings": ("flightdeck.launch._setup", "configured_settings"),
    "configured_temporal": ("flightdeck.launch._setup", "configured_temporal"),
    "TemporalSettings": ("flightdeck.launch._setup", "TemporalSettings"),
    "StepOutcome": ("flightdeck.launch._task", "StepOutcome"),
    "StepSettings": ("flightdeck.launch._task", "StepSettings"),
    "StepTask": ("flightdeck.launch._task", "StepTask"),
    "TemporalEngine": ("flightdeck.launch._temporal_client", "TemporalEngine"),
    "signal_approval": ("flightdeck.launch._temporal_client", "signal_approval"),
    "describe_run": ("flightdeck.launch._temporal_client", "describe_run"),
    "wait_for_run": ("flightdeck.launch._temporal_client", "wait_for_run"),
    "run_worker": ("flightdeck.launch._temporal_worker", "run_worker"),
    "TransformContext": ("flightdeck.launch._transforms", "TransformContext"),
    "get_transform": ("flightdeck.launch._transforms", "get_transform"),
    "register_transform": ("flightdeck.launch._transforms", "register_transform"),
    "transform_names": ("flightdeck.launch._transforms", "transform_names"),
}


__all__ = [
    "ActionCall",
    "ActionFailed",
    "ActionInfo",
    "ActionInvoker",
    "Approvals",
    "AuditRouter",
    "Credential",
    "DriverInvoker",
    "DryRun",
    "EgressDenied",
    "EgressPolicy",
    "Executor",
    "HandlerInvoker",
    "ImageCache",
    "Journal",
    "LaunchError",
    "LaunchEvent",
    "LaunchOptions",
    "LocalExecutor",
    "ProbeResult",
    "ProbingInvoker",
    "ResolvedInputs",
    "ResumeDecisions",
    "RunResult",
    "RunRow",
    "Runtime",
    "SecretStore",
    "StepOutcome",
    "StepRow",
    "StepServices",
    "StepSettings",
    "StepTask",
    "TemporalEngine",
    "TemporalSettings",
    "TransformContext",
    "bwrap_path",
    "check_actions",
    "code_resolver",
    "configured_runtime",
    "configured_settings",
    "configured_temporal",
    "describe_run",
    "dry_run",
    "execute_step",
    "frozen_workspace",
    "get_transform",
    "guard",
    "launch",
    "provider_from_settings",
    "redact",
    "register_transform",
    "resolve_inputs",
    "rewrite",
    "route_run",
    "run_list",
    "run_report",
    "run_worker",
    "select",
    "signal_approval",
    "sink_from_spec",
    "transform_names",
    "verify_target",
    "wait_for_run",
]


_LAZY_NAMES = _LazyNames(__name__, _LAZY)


def __getattr__(name: str) -> _typing.Any:
    return _LAZY_NAMES.load(name)


def __dir__() -> list[str]:
    return _LAZY_NAMES.names()
