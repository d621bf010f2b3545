"""Read frontmatter data into a `FlightPlan` (lenient: wrong types are skipped)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flightdeck.flightplan.model._lock import Lock
from flightdeck.flightplan.model._models import (
    ActionRequirement,
    Environment,
    FlightPlan,
    Input,
    Output,
    Resolution,
    Step,
    TrustContract,
)
from flightdeck.flightplan.model._values import _list, _map, _str, _strs

# What a step read from some data holds that is not a view of that data:
# its fields but `raw`, `references` and `trust_contract` (all immutable
# values), with its parsed bindings and dependencies; and its references'
# items. Taken by the parse cache from a plan before anyone else holds it.
StepStamp = tuple[dict[str, Any], tuple[tuple[str, str], ...]]
_VIEWS = ("raw", "references", "trust_contract")


def step_stamp(step: Step) -> StepStamp:
    step.dependencies()  # the memos are in the stamp: computed once per bytes
    state = {key: value for key, value in step.__dict__.items() if key not in _VIEWS}
    return state, tuple(step.references.items())


def read_plan(data: Mapping[str, Any], body: str = "") -> FlightPlan:
    """Build the typed view of a SKILL.md frontmatter. Never raises on bad data."""
    return read_again(data, body, None)


def read_again(
    data: Mapping[str, Any], body: str, stamps: tuple[StepStamp, ...] | None
) -> FlightPlan:
    """`read_plan`, the steps made from `stamps` (`step_stamp`, taken from the
    plan of data equal to `data`) with `data`'s own items as their views."""
    block = data.get("aileron")
    aileron = _map(block)
    steps = _stamped(aileron.get("steps"), stamps) if stamps is not None else None
    return FlightPlan(
        name=_str(data.get("name")),
        description=_str(data.get("description")),
        data=data,
        body=body,
        has_aileron=isinstance(block, dict),
        schema_version=_str(aileron.get("schemaVersion")),
        requires=tuple(_requires(aileron.get("requires"))),
        environment=_environment(aileron.get("environment")),
        inputs=tuple(_inputs(aileron.get("inputs"))),
        outputs=tuple(_outputs(aileron.get("outputs"))),
        steps=steps if steps is not None else tuple(_steps(aileron.get("steps"))),
        lock=Lock.read(aileron.get("lock")),
    )


def _requires(value: object) -> list[ActionRequirement]:
    out = []
    for index, item in enumerate(_list(_map(value).get("actions"))):
        if isinstance(item, dict) and isinstance(item.get("ref"), str):
            out.append(
                ActionRequirement(index, item["ref"], TrustContract.read(item.get("trustContract")))
            )
    return out


def _environment(value: object) -> Environment | None:
    if not isinstance(value, dict):
        return None
    return Environment(tools=_strs(value.get("tools")), image=_str(value.get("image")))


def _inputs(value: object) -> list[Input]:
    out = []
    for index, item in enumerate(_list(value)):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        rule = _map(item.get("resolution"))
        source = _map(rule.get("source"))
        resolution = Resolution(
            rule=_str(rule.get("rule")),
            default=rule.get("default"),
            has_default="default" in rule,
            value=_str(rule.get("value")),
            source_action_ref=_str(source.get("actionRef")),
            source_select=_str(source.get("select")),
        )
        out.append(
            Input(
                index,
                item["name"],
                _str(item.get("type")),
                resolution,
                _str(item.get("description")),
                item,
            )
        )
    return out


def _outputs(value: object) -> list[Output]:
    out = []
    for index, item in enumerate(_list(value)):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        publish = _map(item.get("publish"))
        out.append(
            Output(
                index,
                item["name"],
                _str(item.get("mimeType")),
                _str(item.get("encoding")),
                _str(publish.get("target")),
                _str(publish.get("path")),
            )
        )
    return out


def _steps(value: object) -> list[Step]:
    # Once per step of a plan read on every launch: optional fields absent
    # (most of them, in most steps) are skipped without a call.
    out = []
    for index, item in enumerate(_list(value)):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        get = item.get
        kind = _str(get("kind"))
        refs = get("args" if kind == "action-call" else "bindings")
        references = (
            {key: text for key, text in refs.items() if isinstance(text, str)}
            if isinstance(refs, dict)
            else {}
        )
        mount, collect, contract = get("mount"), get("collect"), get("trustContract")
        out.append(
            Step(
                index=index,
                id=item["id"],
                kind=kind,
                references=references,
                outputs=_strs(get("outputs")),
                action_ref=_str(get("actionRef")),
                command=_strs(get("command")) if "command" in item else (),
                mount_path=_str(mount.get("path")) if isinstance(mount, dict) else None,
                collect_path=_str(collect.get("path")) if isinstance(collect, dict) else None,
                trust_contract=TrustContract.read(contract) if contract is not None else None,
                materializes_output=_str(get("materializesOutput")),
                raw=item,
            )
        )
    return out


def _stamped(value: object, stamps: tuple[StepStamp, ...]) -> tuple[Step, ...] | None:
    # A frozen dataclass's __init__ sets each field through object.__setattr__
    # (~2 us a step); a copy of the stamp's fields is a fraction of that. None
    # (read the steps) if the data is not what the stamps were taken from.
    items = _list(value)
    out = []
    for state, references in stamps:
        index = state["index"]
        item = items[index] if index < len(items) else None
        if not isinstance(item, dict) or item.get("id") != state["id"]:
            return None
        step = object.__new__(Step)
        fields = step.__dict__
        fields.update(state)
        fields["raw"] = item
        fields["references"] = dict(references)
        contract = item.get("trustContract")
        fields["trust_contract"] = TrustContract.read(contract) if contract is not None else None
        out.append(step)
    return tuple(out)
