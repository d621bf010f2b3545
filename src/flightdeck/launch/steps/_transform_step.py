"""Run a transform step: a registered deterministic function over bindings,
under a deny-all egress policy (no network, no subprocess, no secrets file)
and with the run's frozen launch time as its only notion of "now"."""

from __future__ import annotations

import os

from flightdeck.guard import Policy, enter, leave
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._services import StepServices
from flightdeck.launch.core._task import StepOutcome, StepTask, split_outputs
from flightdeck.launch.core._values import to_plain
from flightdeck.launch.steps._transforms import TransformContext, get_transform

_LIMIT = "what a transform may do (no network, subprocess or secrets file)"

# One deny-all policy per transform name, secrets file and (for a relative
# secrets path, which the policy resolves against it) working directory;
# each step gets a fresh copy with nothing recorded (`Policy.fresh`), where
# building one per step normalised the same names again. Few keys in any
# run; the bound only guards a process that changes them without end.
_TEMPLATES: dict[tuple[str, str, str], Policy] = {}
_MAX_TEMPLATES = 64


def _policy(name: str, secrets: str) -> Policy:
    key = (name, secrets, "" if os.path.isabs(secrets) else os.getcwd())
    template = _TEMPLATES.get(key)
    if template is None:
        if len(_TEMPLATES) >= _MAX_TEMPLATES:
            _TEMPLATES.clear()
        template = _TEMPLATES[key] = Policy.deny_all(
            frozenset({secrets}), owner=f"transform {name!r}", limit=_LIMIT
        )
    return template.fresh()


def run_transform(task: StepTask, services: StepServices) -> StepOutcome:
    name = str(task.step.get("transform") or "identity")
    try:
        function = get_transform(name)
        policy = _policy(name, str(services.secrets.path))
        # What `active(policy)` does, without building a context manager
        # per step (a local transform runs once per step, in a few µs).
        token = enter(policy)
        try:
            value = function(task.values, TransformContext(task.step_id, task.launch_time))
        finally:
            leave(token)
        if policy.denied:
            raise LaunchError(
                "transform.impure",
                f"transform {name!r} tried to reach {policy.denied[0].target}; transforms have no"
                " network, subprocess or credential access",
            )
        value = to_plain(value)
        outputs = split_outputs(list(task.step.get("outputs", [])), value)
    except LaunchError as exc:
        exc.step = task.step_id
        return StepOutcome.failed(exc.to_dict())
    except Exception as exc:  # a registered transform's own bug must not crash the run
        error = LaunchError("transform.failed", f"{name}: {type(exc).__name__}: {exc}")
        error.step = task.step_id
        return StepOutcome.failed(error.to_dict())
    return StepOutcome("completed", result=value, outputs=outputs)
