"""Run a transform step: a registered deterministic function over bindings,
under a deny-all egress policy (no network, no subprocess, no secrets file)
and with the run's frozen launch time as its only notion of "now"."""

from __future__ import annotations

from flightdeck.guard import Policy, enter, leave
from flightdeck.launch._errors import LaunchError
from flightdeck.launch._services import StepServices
from flightdeck.launch._task import StepOutcome, StepTask, split_outputs
from flightdeck.launch._transforms import TransformContext, get_transform
from flightdeck.launch._values import to_plain

_LIMIT = "what a transform may do (no network, subprocess or secrets file)"


def run_transform(task: StepTask, services: StepServices) -> StepOutcome:
    name = str(task.step.get("transform") or "identity")
    forbidden = frozenset({str(services.secrets.path)})
    try:
        function = get_transform(name)
        policy = Policy.deny_all(forbidden, owner=f"transform {name!r}", limit=_LIMIT)
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
