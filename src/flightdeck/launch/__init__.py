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
    from flightdeck.launch._drivers import DriverInvoker
    from flightdeck.launch._dryrun import DryRun, dry_run
    from flightdeck.launch._inputs import ResolvedInputs, resolve_inputs
    from flightdeck.launch._launch import LaunchOptions, launch, verify_target
    from flightdeck.launch._pins import frozen_workspace
    from flightdeck.launch._preflight import check_actions
    from flightdeck.launch._setup import (
        catalog_composer,
        code_resolver,
        configured_runtime,
        configured_settings,
        configured_temporal,
    )
    from flightdeck.launch.compose._composer import FeatureComposer
    from flightdeck.launch.core._errors import LaunchError
    from flightdeck.launch.core._invoker import (
        ActionCall,
        ActionFailed,
        ActionInfo,
        ActionInvoker,
        HandlerInvoker,
        ProbingInvoker,
    )
    from flightdeck.launch.core._paths import rewrite, select
    from flightdeck.launch.core._secrets import Credential, SecretStore
    from flightdeck.launch.core._services import StepServices, provider_from_settings
    from flightdeck.launch.core._task import StepOutcome, StepSettings, StepTask
    from flightdeck.launch.engine._approval import Approvals
    from flightdeck.launch.engine._audit import AuditRouter, sink_from_spec
    from flightdeck.launch.engine._conclude import RunResult
    from flightdeck.launch.engine._events import LaunchEvent
    from flightdeck.launch.engine._executor import Executor, LocalExecutor, execute_step
    from flightdeck.launch.engine._journal import Journal
    from flightdeck.launch.engine._probe import ProbeResult
    from flightdeck.launch.engine._report import run_list, run_report, write_outputs
    from flightdeck.launch.engine._resume import ResumeDecisions
    from flightdeck.launch.engine._route import TemporalSettings
    from flightdeck.launch.engine._route import route as route_run
    from flightdeck.launch.engine._rows import RunRow, StepRow
    from flightdeck.launch.engine._runtime import Runtime
    from flightdeck.launch.image._cache import ImageCache
    from flightdeck.launch.sandbox._bwrap import bwrap_path
    from flightdeck.launch.steps._redact import redact
    from flightdeck.launch.steps._transforms import (
        TransformContext,
        get_transform,
        register_transform,
        transform_names,
    )
    from flightdeck.launch.temporal._client import (
        TemporalEngine,
        describe_run,
        signal_approval,
        wait_for_run,
    )
    from flightdeck.launch.temporal._worker import run_worker

_LAZY: dict[str, tuple[str, str]] = {
    "EgressPolicy": ("flightdeck.guard", "Policy"),
    "EgressDenied": ("flightdeck.guard", "Refused"),
    "guard": ("flightdeck.guard", "active"),
    "Approvals": ("flightdeck.launch.engine._approval", "Approvals"),
    "AuditRouter": ("flightdeck.launch.engine._audit", "AuditRouter"),
    "sink_from_spec": ("flightdeck.launch.engine._audit", "sink_from_spec"),
    "RunResult": ("flightdeck.launch.engine._conclude", "RunResult"),
    "DriverInvoker": ("flightdeck.launch._drivers", "DriverInvoker"),
    "LaunchError": ("flightdeck.launch.core._errors", "LaunchError"),
    "LaunchEvent": ("flightdeck.launch.engine._events", "LaunchEvent"),
    "Executor": ("flightdeck.launch.engine._executor", "Executor"),
    "LocalExecutor": ("flightdeck.launch.engine._executor", "LocalExecutor"),
    "execute_step": ("flightdeck.launch.engine._executor", "execute_step"),
    "ImageCache": ("flightdeck.launch.image._cache", "ImageCache"),
    "ResolvedInputs": ("flightdeck.launch._inputs", "ResolvedInputs"),
    "resolve_inputs": ("flightdeck.launch._inputs", "resolve_inputs"),
    "ActionCall": ("flightdeck.launch.core._invoker", "ActionCall"),
    "ActionFailed": ("flightdeck.launch.core._invoker", "ActionFailed"),
    "ActionInfo": ("flightdeck.launch.core._invoker", "ActionInfo"),
    "ActionInvoker": ("flightdeck.launch.core._invoker", "ActionInvoker"),
    "HandlerInvoker": ("flightdeck.launch.core._invoker", "HandlerInvoker"),
    "ProbingInvoker": ("flightdeck.launch.core._invoker", "ProbingInvoker"),
    "Journal": ("flightdeck.launch.engine._journal", "Journal"),
    "RunRow": ("flightdeck.launch.engine._rows", "RunRow"),
    "StepRow": ("flightdeck.launch.engine._rows", "StepRow"),
    "LaunchOptions": ("flightdeck.launch._launch", "LaunchOptions"),
    "Runtime": ("flightdeck.launch.engine._runtime", "Runtime"),
    "launch": ("flightdeck.launch._launch", "launch"),
    "verify_target": ("flightdeck.launch._launch", "verify_target"),
    "frozen_workspace": ("flightdeck.launch._pins", "frozen_workspace"),
    "rewrite": ("flightdeck.launch.core._paths", "rewrite"),
    "select": ("flightdeck.launch.core._paths", "select"),
    "ProbeResult": ("flightdeck.launch.engine._probe", "ProbeResult"),
    "redact": ("flightdeck.launch.steps._redact", "redact"),
    "run_list": ("flightdeck.launch.engine._report", "run_list"),
    "run_report": ("flightdeck.launch.engine._report", "run_report"),
    "write_outputs": ("flightdeck.launch.engine._report", "write_outputs"),
    "ResumeDecisions": ("flightdeck.launch.engine._resume", "ResumeDecisions"),
    "route_run": ("flightdeck.launch.engine._route", "route"),
    "bwrap_path": ("flightdeck.launch.sandbox._bwrap", "bwrap_path"),
    "Credential": ("flightdeck.launch.core._secrets", "Credential"),
    "SecretStore": ("flightdeck.launch.core._secrets", "SecretStore"),
    "StepServices": ("flightdeck.launch.core._services", "StepServices"),
    "provider_from_settings": ("flightdeck.launch.core._services", "provider_from_settings"),
    "code_resolver": ("flightdeck.launch._setup", "code_resolver"),
    "catalog_composer": ("flightdeck.launch._setup", "catalog_composer"),
    "FeatureComposer": ("flightdeck.launch.compose._composer", "FeatureComposer"),
    "check_actions": ("flightdeck.launch._preflight", "check_actions"),
    "DryRun": ("flightdeck.launch._dryrun", "DryRun"),
    "dry_run": ("flightdeck.launch._dryrun", "dry_run"),
    "configured_runtime": ("flightdeck.launch._setup", "configured_runtime"),
    "configured_settings": ("flightdeck.launch._setup", "configured_settings"),
    "configured_temporal": ("flightdeck.launch._setup", "configured_temporal"),
    "TemporalSettings": ("flightdeck.launch.engine._route", "TemporalSettings"),
    "StepOutcome": ("flightdeck.launch.core._task", "StepOutcome"),
    "StepSettings": ("flightdeck.launch.core._task", "StepSettings"),
    "StepTask": ("flightdeck.launch.core._task", "StepTask"),
    "TemporalEngine": ("flightdeck.launch.temporal._client", "TemporalEngine"),
    "signal_approval": ("flightdeck.launch.temporal._client", "signal_approval"),
    "describe_run": ("flightdeck.launch.temporal._client", "describe_run"),
    "wait_for_run": ("flightdeck.launch.temporal._client", "wait_for_run"),
    "run_worker": ("flightdeck.launch.temporal._worker", "run_worker"),
    "TransformContext": ("flightdeck.launch.steps._transforms", "TransformContext"),
    "get_transform": ("flightdeck.launch.steps._transforms", "get_transform"),
    "register_transform": ("flightdeck.launch.steps._transforms", "register_transform"),
    "transform_names": ("flightdeck.launch.steps._transforms", "transform_names"),
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
    "FeatureComposer",
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
    "catalog_composer",
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
    "write_outputs",
]


_LAZY_NAMES = _LazyNames(__name__, _LAZY)

# The sub-packages hold the modules behind the names above; importing one sets
# it on this package, but it is not one of the package's names.
_PARTS = frozenset({"compose", "core", "engine", "image", "sandbox", "steps", "temporal"})


def __getattr__(name: str) -> _typing.Any:
    return _LAZY_NAMES.load(name)


def __dir__() -> list[str]:
    return [name for name in _LAZY_NAMES.names() if name not in _PARTS]
