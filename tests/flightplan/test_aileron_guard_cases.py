"""Aileron's own freeze-lint guard cases, restated for flightdeck (issue 15).

Each case names the Aileron test it restates (github.com/ALRubinger/aileron,
internal/flightplan/freeze/{promptguard,commandguard,hostguard}_test.go,
read at commits 8696d35, 1e40f7a and 041ebca): the same plan shape, the same
verdict. Only facts are taken (inputs, steps, expected outcome); the plans
are built here. flightdeck's verdict is its lint's: no error means "clean".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from flightdeck.documents import DocumentKind, validate_data
from flightdeck.flightplan import lint_document
from tests.flightplan._plans import document


def _input(name: str, constrained: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "name": name,
        "type": "string",
        "resolution": {"rule": "literal", "default": "us-east-1"},
    }
    if constrained:
        item["constraint"] = {"enum": ["us-east-1", "us-west-2"]}
    return item


def _seam(prompt: str | None) -> dict[str, Any]:
    step: dict[str, Any] = {
        "id": "sum",
        "kind": "llm-seam",
        "model": "anthropic:claude-haiku-4-5",
        "outputs": ["text"],
    }
    if prompt is not None:
        step["prompt"] = prompt
    return step


def _transform(step_id: str, *outputs: str) -> dict[str, Any]:
    return {"id": step_id, "kind": "transform", "outputs": list(outputs)}


def _tool(command: list[str], hosts: list[str] | None = None) -> dict[str, Any]:
    step: dict[str, Any] = {"id": "q", "kind": "tool", "command": command, "outputs": ["out"]}
    if hosts is not None:
        step["trustContract"] = {
            "credential": {"kind": "none"},
            "hosts": hosts,
            "effect": "read",
            "idempotency": {"safeToRetry": True},
            "audit": {"fields": ["result"]},
        }
    return step


@dataclass(frozen=True)
class Case:
    aileron_test: str
    steps: list[dict[str, Any]]
    clean: bool
    inputs: list[dict[str, Any]] = field(default_factory=list)


HOST = "athena.{{ inputs.aws_region }}.amazonaws.com"
CASES = [
    # promptguard_test.go
    Case(
        "TestLint_PromptUndeclaredInputRejected",
        [_seam("Report for {{ inputs.zone }}.")],
        False,
        [_input("region", True)],
    ),
    Case("TestLint_PromptUnknownStepRejected", [_seam("Summarize {{ steps.nope.out }}.")], False),
    Case(
        "TestLint_PromptUnknownOutputRejected",
        [_transform("render", "csv"), _seam("Summarize {{ steps.render.wrongout }}.")],
        False,
    ),
    Case(
        "TestLint_PromptMalformedTokenRejected",
        [_transform("render", "csv"), _seam("Summarize {{ steps.render.csv }.")],
        False,
    ),
    Case("TestLint_PromptBadBodyRejected", [_seam("Summarize {{ outputs.x }}.")], False),
    Case(
        "TestLint_PromptUnconstrainedInputAccepted",
        [_seam("Report the last {{ inputs.window }} days.")],
        True,
        [_input("window", False)],
    ),
    Case(
        "TestLint_PromptConstrainedInputAccepted",
        [_seam("Report for {{ inputs.region }}.")],
        True,
        [_input("region", True)],
    ),
    Case(
        "TestLint_PromptValidStepOutputAccepted",
        [_transform("render", "csv"), _seam("Summarize {{ steps.render.csv }}.")],
        True,
    ),
    Case("TestLint_PromptTokenFreeAccepted", [_seam("Summarize the run in one paragraph.")], True),
    Case(
        "TestLint_PromptMultipleValidTokensAccepted",
        [
            _transform("q", "series"),
            _transform("render", "csv"),
            _seam(
                "For {{ inputs.window }} days summarize {{ steps.q.series }}"
                " rendered as {{ steps.render.csv }}."
            ),
        ],
        True,
        [_input("window", False)],
    ),
    Case("TestLint_SeamWithNoPromptAccepted", [_seam(None)], True),
    # commandguard_test.go (the guard's three refusals and its clean path)
    Case(
        "commandguard: malformed token",
        [_tool(["aws", "--region", "{{ inputs.aws_region }"])],
        False,
        [_input("aws_region", True)],
    ),
    Case(
        "commandguard: undeclared input",
        [_tool(["aws", "--region", "{{ inputs.zone }}"])],
        False,
        [_input("aws_region", True)],
    ),
    Case(
        "commandguard: unconstrained input",
        [_tool(["aws", "--region", "{{ inputs.aws_region }}"])],
        False,
        [_input("aws_region", False)],
    ),
    Case(
        "commandguard: constrained input",
        [_tool(["aws", "--region={{ inputs.aws_region }}"])],
        True,
        [_input("aws_region", True)],
    ),
    # hostguard_test.go
    Case(
        "TestLint_HostUnconstrainedInputRejected",
        [_tool(["aws", "s3", "ls"], [HOST])],
        False,
        [_input("aws_region", False)],
    ),
    Case(
        "TestLint_HostConstrainedInputAccepted",
        [_tool(["aws", "s3", "ls"], [HOST])],
        True,
        [_input("aws_region", True)],
    ),
    Case(
        "TestLint_HostUnknownInputRejected",
        [_tool(["aws", "s3", "ls"], ["athena.{{ inputs.zone }}.amazonaws.com"])],
        False,
        [_input("aws_region", True)],
    ),
    Case(
        "TestLint_HostTokenFreeClean",
        [_tool(["aws", "s3", "ls"], ["s3.amazonaws.com"])],
        True,
        [_input("aws_region", False)],
    ),
    Case("TestLint_HostNoTrustContractClean", [_tool(["aws"])], True, [_input("aws_region", True)]),
]


def _plan(case: Case) -> dict[str, Any]:
    return {
        "name": "guard-case",
        "description": "A plan restating one of Aileron's guard tests.",
        "aileron": {
            "schemaVersion": "aileron.flightplan.v1",
            "environment": {"tools": ["aws-cli@2.x"]},
            "inputs": case.inputs,
            "outputs": [],
            "steps": case.steps,
        },
    }


@pytest.mark.parametrize("case", CASES, ids=[c.aileron_test for c in CASES])
def test_flightdeck_gives_aileron_guards_verdict(case: Case) -> None:
    data = _plan(case)
    diags = [*validate_data(DocumentKind.SKILL, data), *lint_document(document(data))]
    errors = [(d.code, d.pointer) for d in diags if d.is_error]
    assert (errors == []) is case.clean, errors


def test_host_pattern_constraint_counts_as_constrained() -> None:
    """TestLint_HostPatternConstraintAccepted."""
    item = _input("aws_region", False)
    item["constraint"] = {"pattern": "^[a-z]{2}-[a-z]+-[0-9]$"}
    data = _plan(Case("", [_tool(["aws", "s3", "ls"], [HOST])], True, [item]))
    diags = [*validate_data(DocumentKind.SKILL, data), *lint_document(document(data))]
    assert [d.code for d in diags if d.is_error] == []


def test_freeze_seals_the_template_host_not_a_resolved_one(tmp_path: Any, keys: Any) -> None:
    """TestRun_SealsTemplateHostNotResolved: the token rides the signed lock."""
    from flightdeck.flightplan import freeze_plan
    from flightdeck.flightplan._emit import emit_skill

    case = Case("", [_tool(["aws", "athena", "list-databases"], [HOST])], True)
    data = _plan(case)
    data["aileron"]["inputs"] = [_input("aws_region", True)]
    path = tmp_path / "SKILL.md"
    path.write_text(emit_skill(data, "# Interp host\n"), encoding="utf-8")
    outcome = freeze_plan(path, signing_key=keys.private_path, version="1.0.0")
    assert outcome.frozen.lock["stepTrust"] == {"q": {"hosts": [HOST]}}
    assert "us-east-1.amazonaws.com" not in (outcome.stored.path / "SKILL.md").read_text()
