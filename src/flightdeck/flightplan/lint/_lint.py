"""Lint: the Flight Plan rules a JSON Schema cannot express.

Each check is a generator of pointer-only diagnostics; `lint_document` adds
file:line:col in one place. Checks read the lenient `FlightPlan` view, so
schema-invalid data never crashes them: a value of the wrong type is simply
not checked here (the schema already reported it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping

from flightdeck.documents import Diagnostic, Document, Severity, locate, pointer_join
from flightdeck.flightplan.lint._lint_environment import CATALOG_CODES, tools, transforms
from flightdeck.flightplan.lint._lint_tokens import constraints, prompt_tokens, tool_tokens
from flightdeck.flightplan.lint._secrets import (
    looks_like_credential,
    may_hold_credential,
    scan_keys,
    scan_values,
)
from flightdeck.flightplan.model._bindings import parse_binding
from flightdeck.flightplan.model._catalog import CatalogTool
from flightdeck.flightplan.model._graph import format_cycle
from flightdeck.flightplan.model._models import FlightPlan
from flightdeck.flightplan.model._read import read_plan

LLM_KEYS = ("llm", "model", "prompt", "completion", "inference")
_A = "/aileron"
_STEPS = f"{_A}/steps"

Check = Callable[[FlightPlan], Iterator[Diagnostic]]


def lint_document(
    document: Document,
    *,
    installed_actions: Collection[str] | None = None,
    known_tools: Mapping[str, CatalogTool] | None = None,
) -> list[Diagnostic]:
    """All lint diagnostics of a SKILL.md, located. `installed_actions`, when
    given, turns each declared action the host lacks into a warning;
    `known_tools` (a catalog file's, `FeatureCatalog.as_tools()`) replaces
    the shipped catalog for `environment.tools`, whose unknown names and
    unmatched versions are then errors, as freeze will compose them."""
    plan, diags = lint_read(document, installed_actions=installed_actions)
    if known_tools is None:
        return diags
    file = str(document.path) if document.path is not None else None
    fresh = locate(list(tools(plan, known_tools, composed=True)), file, document.source_map)
    return [*(d for d in diags if d.code not in CATALOG_CODES), *fresh]


def lint_read(
    document: Document, *, installed_actions: Collection[str] | None = None
) -> tuple[FlightPlan, list[Diagnostic]]:
    """`lint_document`, also returning the plan it read (loading a plan needs
    both; reading a 1,000-step plan twice cost ~20 ms)."""
    plan = read_plan(document.data, document.body)
    diags = list(lint_plan(plan, installed_actions=installed_actions))
    if plan.has_aileron:
        diags.extend(_body_secrets(document))
    file = str(document.path) if document.path is not None else None
    return plan, list(locate(diags, file, document.source_map))


def _body_secrets(document: Document) -> Iterator[Diagnostic]:
    """The markdown body is sealed with the plan too: no credentials there."""
    if not may_hold_credential(document.body):
        return  # the common case, without a pass per line
    for offset, line in enumerate(document.body.split("\n")):
        why = looks_like_credential(line)
        if why:
            yield Diagnostic(
                code="flightplan.secret_value",
                message=f"the body has what looks like a credential: {why}",
                line=document.body_line + offset,
                column=1,
                hint="remove it; credentials come from the secret store at launch",
            )


def lint_plan(
    plan: FlightPlan, *, installed_actions: Collection[str] | None = None
) -> Iterator[Diagnostic]:
    """Unlocated diagnostics for a plan; empty when there is no `aileron` block."""
    if not plan.has_aileron:
        return
    for check in _CHECKS:
        yield from check(plan)
    if installed_actions is not None:
        yield from _unsatisfied(plan, installed_actions)


def _error(code: str, message: str, pointer: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, message=message, pointer=pointer, hint=hint)


def _duplicates(plan: FlightPlan) -> Iterator[Diagnostic]:
    groups = (
        ("step id", "id", _STEPS, [(s.id, s.index) for s in plan.steps]),
        ("input", "name", f"{_A}/inputs", [(i.name, i.index) for i in plan.inputs]),
        ("output", "name", f"{_A}/outputs", [(o.name, o.index) for o in plan.outputs]),
        ("action", "ref", f"{_A}/requires/actions", [(a.ref, a.index) for a in plan.requires]),
    )
    for what, field, base, items in groups:
        seen: dict[str, int] = {}
        for name, index in items:
            if name not in seen:
                seen[name] = index
                continue
            yield _error(
                f"flightplan.duplicate_{what.replace(' ', '_')}",
                f"{what} '{name}' is declared twice (first at index {seen[name]})",
                pointer_join(base, index, field),
                "names must be unique within the manifest",
            )
    for step in plan.steps:
        if len(set(step.outputs)) == len(step.outputs):
            continue  # the common case, without a Counter per step
        for name, count in Counter(step.outputs).items():
            if count > 1:
                yield _error(
                    "flightplan.duplicate_step_output",
                    f"step '{step.id}' lists output '{name}' {count} times",
                    pointer_join(_STEPS, step.index, "outputs"),
                )


def _references(plan: FlightPlan) -> Iterator[Diagnostic]:
    inputs = {item.name for item in plan.inputs}
    steps = {step.id: step for step in plan.steps}
    for step in plan.steps:
        for key, text in step.references.items():
            binding = parse_binding(text)
            if binding is not None and (
                binding.input in inputs
                or (binding.step in steps and binding.output in steps[binding.step].outputs)
            ):
                continue  # the common case: no pointer needed
            pointer = pointer_join(_STEPS, step.index, step.references_field, key)
            if binding is None:
                yield _error(
                    "flightplan.invalid_binding",
                    f"'{text}' is not a binding reference",
                    pointer,
                    "a binding is 'inputs.<name>' or 'steps.<id>.<output>', never a value",
                )
            elif binding.input is not None and binding.input not in inputs:
                yield _error(
                    "flightplan.unknown_input",
                    f"step '{step.id}' binds '{text}' but no input '{binding.input}' is declared",
                    pointer,
                    _choices("declared inputs", inputs),
                )
            elif binding.step is not None and binding.step not in steps:
                yield _error(
                    "flightplan.unknown_step",
                    f"step '{step.id}' binds '{text}' but there is no step '{binding.step}'",
                    pointer,
                    _choices("steps", steps),
                )
            elif binding.step is not None and binding.output not in steps[binding.step].outputs:
                yield _error(
                    "flightplan.unknown_step_output",
                    f"step '{binding.step}' has no output '{binding.output}'"
                    f" (bound by '{step.id}')",
                    pointer,
                    _choices(f"outputs of '{binding.step}'", steps[binding.step].outputs),
                )


def _cycles(plan: FlightPlan) -> Iterator[Diagnostic]:
    graph = plan.graph
    for cycle in graph.cycles():
        first = plan.step(cycle[0])
        pointer = pointer_join(_STEPS, first.index, "id") if first else _STEPS
        yield _error(
            "flightplan.cycle",
            f"the step graph has a cycle: {format_cycle(cycle)}",
            pointer,
            "the step graph must be acyclic; break one of the bindings",
        )


def _actions(plan: FlightPlan) -> Iterator[Diagnostic]:
    declared = {item.ref for item in plan.requires}
    hint = "declare it under aileron.requires.actions with its trust contract"
    for step in plan.steps:
        if step.kind == "action-call" and step.action_ref and step.action_ref not in declared:
            yield _error(
                "flightplan.undeclared_action",
                f"step '{step.id}' calls '{step.action_ref}', not declared in requires.actions",
                pointer_join(_STEPS, step.index, "actionRef"),
                hint,
            )
    for item in plan.inputs:
        ref = item.resolution.source_action_ref
        if ref and ref not in declared:
            yield _error(
                "flightplan.undeclared_source_action",
                f"input '{item.name}' is read from '{ref}', not declared in requires.actions",
                pointer_join(f"{_A}/inputs", item.index, "resolution", "source", "actionRef"),
                hint,
            )


def _materialized(plan: FlightPlan) -> Iterator[Diagnostic]:
    declared = {item.name for item in plan.outputs}
    producers: dict[str, str] = {}
    for step in plan.steps:
        name = step.materializes_output
        if name is None:
            continue
        pointer = pointer_join(_STEPS, step.index, "materializesOutput")
        if name not in declared:
            yield _error(
                "flightplan.unknown_output",
                f"step '{step.id}' materializes '{name}', which is not a declared output",
                pointer,
                _choices("declared outputs", declared),
            )
        elif name in producers:
            yield _error(
                "flightplan.output_materialized_twice",
                f"output '{name}' is materialized by both '{producers[name]}' and '{step.id}'",
                pointer,
            )
        else:
            producers[name] = step.id
    if plan.steps:
        for item in plan.outputs:
            if item.name not in producers:
                yield _error(
                    "flightplan.output_not_materialized",
                    f"no step materializes the declared output '{item.name}'",
                    pointer_join(f"{_A}/outputs", item.index, "name"),
                    "set materializesOutput on the step that produces it",
                )


def _llm_keys(plan: FlightPlan) -> Iterator[Diagnostic]:
    for step in plan.steps:
        if step.kind == "llm-seam":
            continue
        for key in LLM_KEYS:
            if key in step.raw:
                yield _error(
                    "flightplan.llm_key_outside_seam",
                    f"step '{step.id}' (kind {step.kind}) carries the LLM key '{key}'",
                    pointer_join(_STEPS, step.index, key),
                    "only an llm-seam step may reach a model",
                )


def _secret_material(plan: FlightPlan) -> Iterator[Diagnostic]:
    actions = f"{_A}/requires/actions"
    roots = [
        (_at(plan, root), root)
        for root in (pointer_join(actions, a.index, "trustContract") for a in plan.requires)
    ]
    # A step's `raw` is its item in `data` (the one `_at` would find).
    roots += [(step.raw, f"{_STEPS}/{step.index}") for step in plan.steps]
    reported: set[str] = set()
    for node, root in roots:
        for finding in scan_keys(node, root):
            reported.add(finding.pointer)
            yield _error(
                "flightplan.secret_key",
                f"'{finding.detail}' would hold secret material",
                finding.pointer,
                "a manifest declares credential kind and placement, never a value",
            )
    for finding in scan_values(dict(plan.data)):
        if finding.pointer not in reported:
            yield _error(
                "flightplan.secret_value",
                f"this looks like a credential: {finding.detail}",
                finding.pointer,
                "remove it; credentials come from the secret store at launch",
            )


def _sealed_trust(plan: FlightPlan) -> Iterator[Diagnostic]:
    # A frozen plan's lock.stepTrust must be exactly what freeze seals from
    # the tool steps' contracts: launch enforces the sealed copy.
    if plan.lock is None:
        return
    declared = {
        step.id: step.trust_contract.hosts
        for step in plan.steps
        if step.kind == "tool" and step.trust_contract is not None
    }
    base = f"{_A}/lock/stepTrust"
    for step_id in sorted(set(declared) | set(plan.lock.step_trust)):
        sealed = plan.lock.step_trust.get(step_id)
        if sealed != declared.get(step_id):
            yield _error(
                "flightplan.step_trust_mismatch",
                f"lock.stepTrust for '{step_id}' ({list(sealed or [])}) does not match the "
                f"step's declared hosts ({list(declared.get(step_id, []))})",
                pointer_join(base, step_id) if sealed is not None else base,
                "re-freeze the plan to reseal the step trust",
            )


def _unsatisfied(plan: FlightPlan, installed: Collection[str]) -> Iterator[Diagnostic]:
    for item in plan.requires:
        if item.ref not in installed:
            yield Diagnostic(
                code="flightplan.unsatisfied_action",
                message=f"action '{item.ref}' is required but not installed on this host",
                severity=Severity.WARNING,
                pointer=pointer_join(f"{_A}/requires/actions", item.index, "ref"),
                hint="a missing requirement, not a parse failure: install the action to launch",
            )


def _at(plan: FlightPlan, pointer: str) -> object:
    node: object = plan.data
    for token in pointer.strip("/").split("/"):
        if isinstance(node, dict):
            node = node.get(token.replace("~1", "/").replace("~0", "~"))
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _choices(label: str, names: Collection[str]) -> str:
    shown = sorted(names)
    return f"{label}: {', '.join(shown)}" if shown else f"there are no {label}"


_CHECKS: tuple[Check, ...] = (
    _duplicates,
    _references,
    constraints,
    tool_tokens,
    prompt_tokens,
    _cycles,
    _actions,
    _materialized,
    _llm_keys,
    tools,
    transforms,
    _secret_material,
    _sealed_trust,
)
