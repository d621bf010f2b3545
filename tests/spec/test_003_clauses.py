"""Seed 003, the Flight Plan Manifest Spec: one test per normative "must" /
"rejected" / "refuses" that no other test names. Schema clauses go through
`validate_data`, stated invariants through `lint_document`, on mutants of the
worked example (tests/flightplan/_plans.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from flightdeck.documents import DocumentKind, validate_data
from flightdeck.flightplan import lint_document
from tests.flightplan._plans import document, example_data

Data = dict[str, Any]


def _schema(mutate: Callable[[Data], None]) -> list[tuple[str, str]]:
    data = example_data()
    mutate(data)
    return [(d.code, d.pointer) for d in validate_data(DocumentKind.SKILL, data)]


def _lint_errors(mutate: Callable[[Data], None]) -> list[tuple[str, str]]:
    data = example_data()
    mutate(data)
    return sorted((d.code, d.pointer) for d in lint_document(document(data)) if d.is_error)


def test_seed003_worked_example_is_the_clean_baseline() -> None:
    """Every mutant below differs from a plan that validates and lints clean."""
    assert _schema(lambda d: None) == []
    assert _lint_errors(lambda d: None) == []


def test_seed003_schema_version_when_present_must_be_aileron_flightplan_v1() -> None:
    """aileron.schemaVersion: 'When present, must be aileron.flightplan.v1.'"""

    def bump(d: Data) -> None:
        d["aileron"]["schemaVersion"] = "aileron.flightplan.v2"

    assert _schema(bump) == [("schema.const", "/aileron/schemaVersion")]
    assert _schema(lambda d: d["aileron"].pop("schemaVersion")) == []  # optional


def test_seed003_a_plan_that_calls_actions_must_declare_each_called_action() -> None:
    """requires.actions: 'A plan that does call actions must declare each called action
    here'; steps[].actionRef 'Must match a declared requires.actions[].ref' (a stated
    invariant the lint step checks, since JSON Schema cannot)."""

    def undeclare(d: Data) -> None:
        d["aileron"]["requires"]["actions"] = d["aileron"]["requires"]["actions"][:1]

    assert _schema(undeclare) == []  # not a schema matter
    errors = _lint_errors(undeclare)
    assert [code for code, _ in errors] == ["flightplan.undeclared_action"]
    assert errors[0][1] == "/aileron/steps/3/actionRef"


def test_seed003_empty_environment_must_be_rejected() -> None:
    """environment: 'A present block must declare at least one of the two, so an empty
    environment: {} is rejected.'"""
    assert _schema(lambda d: d["aileron"].update(environment={})) == [
        ("schema.minProperties", "/aileron/environment")
    ]


def test_seed003_unknown_catalog_tool_is_rejected_at_validation_before_freeze() -> None:
    """environment.tools: 'The name set is closed to the curated catalog; an unknown name
    is rejected at validation, before freeze.'"""
    errors = _lint_errors(lambda d: d["aileron"]["environment"]["tools"].append("curl@8"))
    assert errors == [("flightplan.unknown_tool", "/aileron/environment/tools/1")]


def test_seed003_oauth2_credential_must_declare_the_oauth_block() -> None:
    """credential: 'An oauth2 credential must declare the oauth block.'"""

    def oauth_without_block(d: Data) -> None:
        contract = d["aileron"]["requires"]["actions"][0]["trustContract"]
        contract["credential"] = {"kind": "oauth2", "placement": "header"}
        contract.pop("oauth", None)

    assert _schema(oauth_without_block) == [
        ("schema.required", "/aileron/requires/actions/0/trustContract")
    ]


def _tool_step(**extra: Any) -> Callable[[Data], None]:
    def add(d: Data) -> None:
        d["aileron"]["steps"].append(
            {
                "id": "post_process",
                "kind": "tool",
                "command": ["aws", "s3", "ls"],
                "bindings": {"csv": "steps.render_csv.csv"},
                "outputs": ["listing"],
                **extra,
            }
        )

    return add


def test_seed003_a_declared_step_trust_contract_must_be_non_empty() -> None:
    """steps[].trustContract: 'A declared contract must be non-empty.'"""
    assert _lint_errors(_tool_step()) == []
    errors = _lint_errors(_tool_step(trustContract={}))
    assert [code for code, _ in errors] == ["flightplan.empty_trust_contract"]
    assert errors[0][1].startswith("/aileron/steps/4/trustContract")


def test_seed003_tool_command_is_an_argv_array_never_a_shell_string() -> None:
    """steps[].command: 'An argv array, never a shell string.'"""
    assert _schema(_tool_step(command="aws s3 ls | head")) == [
        ("schema.type", "/aileron/steps/4/command")
    ]


def test_seed003_step_kind_is_a_closed_enum() -> None:
    """steps[].kind: 'One of action-call, transform, tool, llm-seam. A closed enum.'"""

    def other_kind(d: Data) -> None:
        d["aileron"]["steps"][1]["kind"] = "python"

    assert _schema(other_kind) == [("schema.enum", "/aileron/steps/1/kind")]


def test_seed003_no_kind_other_than_llm_seam_can_reach_an_llm() -> None:
    """'By construction no kind other than llm-seam can reach an LLM': a model key on a
    transform is refused, the same key on the seam is fine."""

    def model_on_transform(d: Data) -> None:
        d["aileron"]["steps"][1]["model"] = "gpt-4o"

    assert _lint_errors(model_on_transform) == [
        ("flightplan.llm_key_outside_seam", "/aileron/steps/1/model")
    ]
    assert _lint_errors(lambda d: d["aileron"]["steps"][2].update(model="gpt-4o")) == []


@pytest.mark.parametrize(
    ("name", "mutate", "code"),
    [
        (
            "input",
            lambda d: d["aileron"]["inputs"][1].update(name="window_days"),
            "flightplan.duplicate_input",
        ),
        (
            "output",
            lambda d: d["aileron"]["outputs"][1].update(name="digest.csv"),
            "flightplan.duplicate_output",
        ),
        (
            "step",
            lambda d: d["aileron"]["steps"][1].update(id="query_metrics"),
            "flightplan.duplicate_step_id",
        ),
    ],
)
def test_seed003_names_must_be_unique_within_the_manifest(
    name: str, mutate: Callable[[Data], None], code: str
) -> None:
    """inputs[].name / outputs[].name 'unique within the manifest'; steps[].id 'unique
    within the step graph'."""
    assert code in [c for c, _ in _lint_errors(mutate)], name


def test_seed003_materializes_output_must_name_a_declared_output() -> None:
    """steps[].materializesOutput: 'The value names a declared outputs[].name.'"""

    def unknown(d: Data) -> None:
        for step in d["aileron"]["steps"]:
            if "materializesOutput" in step:
                step["materializesOutput"] = "nowhere.txt"
                return
        raise AssertionError("the worked example materializes an output")

    codes = [c for c, _ in _lint_errors(unknown)]
    assert "flightplan.unknown_output" in codes


def test_seed003_publish_path_is_required_when_target_is_file() -> None:
    """outputs[].publish: 'path is required and names the output file when target is
    file.'"""
    assert _schema(lambda d: d["aileron"]["outputs"][0]["publish"].pop("path")) == [
        ("schema.required", "/aileron/outputs/0/publish")
    ]
    none_target = _schema(lambda d: d["aileron"]["outputs"][0].update(publish={"target": "none"}))
    assert none_target == []


def test_seed003_present_environment_must_declare_tools_or_image() -> None:
    """environment: 'A present block must declare at least one of the two.' `tools: []`
    passes the schema (the seed's outline uses it), so lint reports it."""
    no_tools = _lint_errors(lambda d: d["aileron"]["environment"].update(tools=[]))
    assert ("flightplan.empty_environment", "/aileron/environment") in no_tools
    with_image = _lint_errors(
        lambda d: d["aileron"]["environment"].update(tools=[], image="registry.example.com/b:1")
    )
    assert "flightplan.empty_environment" not in {code for code, _ in with_image}


@pytest.mark.parametrize("version", ["2", "2.x", "2.19.1"])
def test_seed003_loose_tool_versions_all_validate(version: str) -> None:
    """environment.tools: 'The version grammar is deliberately loose (2, 2.x, and 2.19.1
    all validate) and freeze resolves it against the catalog.' gh has no 2.19.1 in the
    catalog: that is freeze's concern, not validation's."""
    for ref in (f"aws-cli@{version}", f"gh@{version}"):
        errors = _lint_errors(lambda d, r=ref: d["aileron"]["environment"].update(tools=[r]))
        assert errors == [], (ref, errors)
    assert _schema(lambda d: d["aileron"]["environment"].update(tools=[f"gh@{version}"])) == []
