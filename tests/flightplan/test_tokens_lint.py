"""Aileron's newer format in lint: input constraints, `{{ inputs.x }}` in tool
argv and step hosts, prompt tokens in llm-seam prompts."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from flightdeck.documents import DocumentKind, validate_data
from flightdeck.flightplan import lint_document, scan_tokens, substitute_inputs
from tests.flightplan._plans import document, example_data

Data = dict[str, Any]

REGION = {
    "name": "region",
    "type": "string",
    "constraint": {"pattern": "[a-z]{2}-[a-z]+-[0-9]"},
    "resolution": {"rule": "literal", "default": "eu-west-1"},
}


def _with_tool_step(data: Data, command: list[str], hosts: list[str] | None = None) -> Data:
    step: Data = {
        "id": "sync",
        "kind": "tool",
        "command": command,
        "bindings": {"csv": "steps.render_csv.csv"},
        "outputs": ["listing"],
    }
    if hosts is not None:
        step["trustContract"] = {
            "credential": {"kind": "aws-sigv4", "placement": "signing"},
            "hosts": hosts,
            "effect": "read",
            "idempotency": {"safeToRetry": True},
            "audit": {"fields": ["result"]},
        }
    data["aileron"]["steps"].append(step)
    return data


def _codes(mutate: Callable[[Data], Any]) -> list[tuple[str, str]]:
    data = example_data()
    data["aileron"]["inputs"].append(copy.deepcopy(REGION))
    mutate(data)
    schema = [(d.code, d.pointer) for d in validate_data(DocumentKind.SKILL, data)]
    assert schema == [], schema
    return sorted((d.code, d.pointer) for d in lint_document(document(data)) if d.is_error)


def test_a_constrained_input_token_in_argv_and_step_hosts_lints_clean() -> None:
    assert (
        _codes(
            lambda d: _with_tool_step(
                d,
                ["aws", "s3", "ls", "--region", "{{ inputs.region }}"],
                ["s3.{{inputs.region}}.amazonaws.com"],
            )
        )
        == []
    )


def test_an_unconstrained_input_token_is_refused() -> None:
    got = _codes(lambda d: _with_tool_step(d, ["aws", "s3", "ls", "{{ inputs.window_days }}"]))
    assert got == [("flightplan.unconstrained_token", "/aileron/steps/4/command/3")]


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (["aws", "{{ inputs.nope }}"], "flightplan.unknown_input"),
        (["aws", "{{ steps.summarize.issue_body }}"], "flightplan.token_not_allowed"),
        (["{{ inputs.region }}", "ls"], "flightplan.token_not_allowed"),
        (["aws", "{{ inputs.region"], "flightplan.malformed_token"),
        (["aws", "inputs.region }}"], "flightplan.malformed_token"),
    ],
)
def test_bad_argv_tokens(command: list[str], code: str) -> None:
    got = _codes(lambda d: _with_tool_step(d, command))
    assert code in {c for c, _ in got}, got


def test_per_action_hosts_stay_literal() -> None:
    def token_host(d: Data) -> None:
        d["aileron"]["requires"]["actions"][0]["trustContract"]["hosts"] = [
            "{{ inputs.region }}.example.com"
        ]

    assert _codes(token_host) == [
        ("flightplan.token_in_action_hosts", "/aileron/requires/actions/0/trustContract/hosts/0")
    ]


def test_constraints_are_well_formed_and_kept_by_default_and_example() -> None:
    def bad_default(d: Data) -> None:
        d["aileron"]["inputs"][-1]["resolution"]["default"] = "mars"

    assert _codes(bad_default) == [
        ("flightplan.constraint_violation", "/aileron/inputs/3/resolution/default")
    ]

    def bad_pattern(d: Data) -> None:
        d["aileron"]["inputs"][-1]["constraint"] = {"pattern": "(["}

    assert _codes(bad_pattern) == [
        ("flightplan.invalid_constraint", "/aileron/inputs/3/constraint")
    ]

    def enum_of_number_strings(d: Data) -> None:
        # compared with the value's string form, as Aileron does: example 30, default 7
        d["aileron"]["inputs"][0]["constraint"] = {"enum": ["7", "30"]}

    assert _codes(enum_of_number_strings) == []

    def enum_missing_the_default(d: Data) -> None:
        d["aileron"]["inputs"][0]["constraint"] = {"enum": ["30"]}

    assert _codes(enum_missing_the_default) == [
        ("flightplan.constraint_violation", "/aileron/inputs/0/resolution/default")
    ]

    def constraint_on_an_array(d: Data) -> None:
        d["aileron"]["inputs"][2]["constraint"] = {"pattern": ".*"}

    assert _codes(constraint_on_an_array) == [
        ("flightplan.invalid_constraint", "/aileron/inputs/2/constraint")
    ]


def _prompt(text: str) -> Callable[[Data], None]:
    def mutate(d: Data) -> None:
        d["aileron"]["steps"][2]["prompt"] = text

    return mutate


def test_prompt_tokens_in_both_grammars_lint_clean() -> None:
    text = (
        "Summarize {{ steps.query_metrics.series }} over {{ inputs.window_days }} days"
        " as of {{inputs.as_of}}; the CSV: {{ csv }} {{ series | tojson }}"
        " {% for s, n in series %}{{ loop.index }}: {{ s.name }} {{ n }}{% endfor %}"
        " {%- set total = 3 %}{{ total }}"
    )
    assert _codes(_prompt(text)) == []


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("{{ inputs.nope }}", "flightplan.unknown_input"),
        ("{{ steps.nope.series }}", "flightplan.unknown_step"),
        ("{{ steps.query_metrics.nope }}", "flightplan.unknown_step_output"),
        ("{{ steps.query_metrics }}", "flightplan.unknown_step_output"),
        ("Use {{ inputs.window_days", "flightplan.malformed_token"),
        ("{{ undeclared_name }}", "flightplan.unknown_prompt_name"),
    ],
)
def test_bad_prompt_tokens_are_caught_at_lint(text: str, code: str) -> None:
    got = _codes(_prompt(text))
    assert got == [(code, "/aileron/steps/2/prompt")], got


def test_a_prompt_step_token_orders_the_seam_after_that_step() -> None:
    from flightdeck.flightplan import read_plan

    data = example_data()
    data["aileron"]["steps"][2]["bindings"] = {"csv": "steps.render_csv.csv"}
    data["aileron"]["steps"][2]["prompt"] = "{{ steps.query_metrics.series }} {{ csv }}"
    step = read_plan(data, "").step("summarize")
    assert step is not None and set(step.dependencies()) == {"render_csv", "query_metrics"}


def test_tokens_scan_and_substitute() -> None:
    kinds = [t.kind for t in scan_tokens("{{ inputs.a }} {{steps.b.c}} {{ d }} {{ e | f }}")]
    assert kinds == ["input", "step", "name", "malformed"]
    assert substitute_inputs("x-{{ inputs.a }}-{{inputs.b}}", {"a": "1", "b": True}) == "x-1-true"
