"""Lint for input constraints and `{{ ... }}` tokens (Aileron's newer format).

- An input `constraint` is well formed and its literal default and example
  keep it.
- A tool step's argv (after the program) and its trust contract's hosts may
  carry `{{ inputs.x }}` only for a declared input with a constraint: launch
  substitutes the checked value into one argv element or host. Per-action
  hosts stay literal.
- An llm-seam prompt's `{{ inputs.x }}` / `{{ steps.<id>.<output> }}` name a
  known input, step and output; a bare `{{ name }}` (flightdeck's Jinja form)
  names one of the seam's bindings; braces are balanced.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from flightdeck.documents import Diagnostic, pointer_join
from flightdeck.flightplan.model._models import FlightPlan, Input, Step
from flightdeck.flightplan.model._tokens import Token, scan
from flightdeck.flightplan.model._values import _list, _map

_A = "/aileron"
_STEPS = f"{_A}/steps"
# The reference at the start of a Jinja expression: `inputs.x | tojson`.
_LEADING = re.compile(r"^(inputs|steps)\.([A-Za-z0-9_-]+)(?:\.([A-Za-z0-9_-]+))?")
# A plain name or a dotted path into one (`series`, `outputs.x`): its first
# name must be a binding, as Jinja would otherwise fail on it at launch.
_NAME_PATH = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z0-9_]+)*$")
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_FOR = re.compile(rf"\{{%-?\s*for\s+({_IDENT}(?:\s*,\s*{_IDENT})*)\s+in\b")
_SET = re.compile(r"\{%-?\s*set\s+([A-Za-z_][A-Za-z0-9_]*)")


def _error(code: str, message: str, pointer: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, message=message, pointer=pointer, hint=hint)


def constraints(plan: FlightPlan) -> Iterator[Diagnostic]:
    for item in plan.inputs:
        if item.constraint is None:
            continue
        base = pointer_join(f"{_A}/inputs", item.index)
        problem = _constraint_problem(item)
        if problem is not None:
            yield _error(
                "flightplan.invalid_constraint",
                f"input '{item.name}': {problem}",
                pointer_join(base, "constraint"),
                "a constraint is {enum: [strings]} or {pattern: <regex>}, compared with the"
                " value's string form",
            )
            continue
        checked = [("example", item.raw.get("example"), pointer_join(base, "example"))]
        if item.resolution.rule == "literal" and item.resolution.has_default:
            where = pointer_join(base, "resolution", "default")
            checked.append(("default", item.resolution.default, where))
        for what, value, pointer in checked:
            if value is None and what == "example":
                continue
            why = item.violation(value)
            if why is not None:
                yield _error(
                    "flightplan.constraint_violation",
                    f"the {what} of input '{item.name}' breaks its constraint: {why}",
                    pointer,
                )


def _constraint_problem(item: Input) -> str | None:
    constraint = item.constraint or {}
    if item.type in ("object", "array"):
        return f"a constraint bounds a scalar, but the input is an {item.type}"
    pattern = constraint.get("pattern")
    if isinstance(pattern, str):
        try:
            re.compile(pattern)
        except re.error as exc:
            return f"the pattern is not a regular expression: {exc}"
    return None


def tool_tokens(plan: FlightPlan) -> Iterator[Diagnostic]:
    inputs = {item.name: item for item in plan.inputs}
    for step in plan.steps:
        if step.kind != "tool":
            continue
        for index, part in enumerate(_list(step.raw.get("command"))):
            pointer = pointer_join(_STEPS, step.index, "command", index)
            if isinstance(part, str):
                yield from _argv_or_host(step, part, pointer, inputs, program=index == 0)
        contract = _map(step.raw.get("trustContract"))
        for index, host in enumerate(_list(contract.get("hosts"))):
            pointer = pointer_join(_STEPS, step.index, "trustContract", "hosts", index)
            if isinstance(host, str):
                yield from _argv_or_host(step, host, pointer, inputs, program=False)
    for item in plan.requires:
        hosts = item.trust_contract.hosts if item.trust_contract else ()
        for index, host in enumerate(hosts):
            if "{{" in host or "}}" in host:
                yield _error(
                    "flightplan.token_in_action_hosts",
                    f"the trust contract of '{item.ref}' has a token in host '{host}'",
                    pointer_join(
                        f"{_A}/requires/actions", item.index, "trustContract", "hosts", index
                    ),
                    "per-action hosts are literal; only a tool step's hosts may use"
                    " {{ inputs.<name> }}",
                )


def _argv_or_host(
    step: Step, text: str, pointer: str, inputs: dict[str, Input], *, program: bool
) -> Iterator[Diagnostic]:
    for token in scan(text):
        if token.kind == "malformed":
            yield _malformed(token, pointer)
        elif program:
            yield _error(
                "flightplan.token_not_allowed",
                f"tool step '{step.id}' puts a token in its program name",
                pointer,
                "the program is literal; tokens may go in its arguments",
            )
        elif token.kind != "input":
            yield _error(
                "flightplan.token_not_allowed",
                f"tool step '{step.id}' uses {token.text}; only {{{{ inputs.<name> }}}} is"
                " substituted in a tool step's command and hosts",
                pointer,
                "bind step outputs through `bindings` (they arrive in input.json)",
            )
        elif token.input not in inputs:
            yield _error(
                "flightplan.unknown_input",
                f"tool step '{step.id}' uses {token.text} but no input '{token.input}' is declared",
                pointer,
            )
        elif inputs[token.input].constraint is None:
            yield _error(
                "flightplan.unconstrained_token",
                f"tool step '{step.id}' substitutes input '{token.input}', which has no constraint",
                pointer,
                f"give input '{token.input}' a constraint (enum or pattern) so launch can check"
                " the value before it reaches the command or the network",
            )


def _malformed(token: Token, pointer: str) -> Diagnostic:
    return _error(
        "flightplan.malformed_token",
        f"'{token.text}': {token.problem}",
        pointer,
        "tokens are {{ inputs.<name> }} or {{ steps.<id>.<output> }}",
    )


def prompt_tokens(plan: FlightPlan) -> Iterator[Diagnostic]:
    inputs = {item.name for item in plan.inputs}
    steps = {step.id: step for step in plan.steps}
    for step in plan.steps:
        prompt = step.raw.get("prompt")
        if step.kind != "llm-seam" or not isinstance(prompt, str):
            continue
        pointer = pointer_join(_STEPS, step.index, "prompt")
        known = set(step.references) | _template_names(prompt)
        for token in scan(prompt):
            inner = token.text[2:-2].strip()
            if token.kind == "malformed" and token.problem and "without" in token.problem:
                yield _malformed(token, pointer)
            elif match := _LEADING.match(inner):
                yield from _reference(step, match, inputs, steps, pointer)
            elif (name := _NAME_PATH.match(inner)) and name.group(1) not in known:
                yield _error(
                    "flightplan.unknown_prompt_name",
                    f"the prompt of '{step.id}' uses {{{{ {inner} }}}}, but '{name.group(1)}'"
                    " is not one of its bindings",
                    pointer,
                    _names(step.references) + "; or write {{ inputs.<name> }} /"
                    " {{ steps.<id>.<output> }}",
                )


def _template_names(prompt: str) -> set[str]:
    """Names a Jinja prompt defines itself: `{% for a, b in ... %}`, `{% set x %}`,
    and `loop` inside a for."""
    names: set[str] = set()
    for targets in _FOR.findall(prompt):
        names.update(part.strip() for part in targets.split(","))
        names.add("loop")
    names.update(_SET.findall(prompt))
    return names


def _reference(
    step: Step, match: re.Match[str], inputs: set[str], steps: dict[str, Step], pointer: str
) -> Iterator[Diagnostic]:
    kind, first, second = match.group(1), match.group(2), match.group(3)
    if kind == "inputs" and first not in inputs:
        yield _error(
            "flightplan.unknown_input",
            f"the prompt of '{step.id}' uses inputs.{first}, which is not declared",
            pointer,
        )
    elif kind == "steps" and first not in steps:
        yield _error(
            "flightplan.unknown_step",
            f"the prompt of '{step.id}' uses steps.{first}, which is not a step",
            pointer,
        )
    elif kind == "steps" and (second is None or second not in steps[first].outputs):
        yield _error(
            "flightplan.unknown_step_output",
            f"the prompt of '{step.id}' uses steps.{first}.{second or ''}, not an output"
            f" of '{first}'",
            pointer,
            f"outputs of '{first}': {', '.join(steps[first].outputs) or 'none'}",
        )


def _names(references: Any) -> str:
    names = sorted(references)
    return f"bindings: {', '.join(names)}" if names else "the seam has no bindings"
