"""Lint of Flight Plans: the worked example, each rule, robustness."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.documents import Severity
from flightdeck.flightplan import lint_document
from tests.flightplan._plans import chain_plan, document, example_body, example_data

ACTIONS = ("aileron:metrics.query_series", "aileron:tracker.create_issue")


def test_worked_example_lints_clean() -> None:
    assert lint_document(document(example_data(), example_body())) == []


def test_seed003_unsatisfied_requirement_is_a_warning_not_a_parse_failure() -> None:
    diags = lint_document(document(example_data()), installed_actions=[ACTIONS[0]])
    assert [(d.code, d.severity, d.pointer) for d in diags] == [
        (
            "flightplan.unsatisfied_action",
            Severity.WARNING,
            "/aileron/requires/actions/1/ref",
        )
    ]


def test_all_actions_installed_gives_no_warning() -> None:
    assert lint_document(document(example_data()), installed_actions=ACTIONS) == []


def test_seed003_step_graph_cycle_reported_as_arrow_path() -> None:
    data, _ = chain_plan(4)
    steps = data["aileron"]["steps"]
    # s1 -> s2 -> s3 -> s1 (s0 stays outside the cycle)
    steps[1]["bindings"] = {"data": "steps.s3.out"}
    diags = [d for d in lint_document(document(data)) if d.code == "flightplan.cycle"]
    assert len(diags) == 1
    assert "s1 → s2 → s3 → s1" in diags[0].message
    assert diags[0].pointer == "/aileron/steps/1/id"


def test_two_independent_cycles_are_both_reported() -> None:
    data, _ = chain_plan(5)
    steps = data["aileron"]["steps"]
    steps[1]["bindings"] = {"data": "steps.s2.out"}
    steps[3]["bindings"] = {"data": "steps.s4.out"}
    messages = [d.message for d in lint_document(document(data)) if d.code == "flightplan.cycle"]
    assert len(messages) == 2
    assert "s1 → s2 → s1" in messages[0]
    assert "s3 → s4 → s3" in messages[1]


def test_binding_pointer_names_the_argument() -> None:
    data = example_data()
    data["aileron"]["steps"][0]["args"]["as_of"] = "inputs.missing"
    (diag,) = lint_document(document(data))
    assert diag.code == "flightplan.unknown_input"
    assert diag.pointer == "/aileron/steps/0/args/as_of"
    assert "window_days" in (diag.hint or "")


def test_seed003_no_secret_example_urls_hosts_labels_are_not_secrets() -> None:
    data = example_data()
    contract = data["aileron"]["requires"]["actions"][1]["trustContract"]
    assert contract["oauth"]["endpoints"]["token"].startswith("https://")
    assert lint_document(document(data)) == []


def test_oauth_endpoint_token_key_with_a_non_url_value_is_a_secret() -> None:
    data = example_data()
    contract = data["aileron"]["requires"]["actions"][1]["trustContract"]
    contract["oauth"]["endpoints"]["token"] = "hunter2hunter2"
    codes = {d.code for d in lint_document(document(data))}
    assert "flightplan.secret_key" in codes


def test_binding_named_token_is_a_reference_not_a_secret() -> None:
    data = example_data()
    data["aileron"]["steps"][0]["args"] = {"token": "inputs.window_days"}
    assert lint_document(document(data)) == []


def test_sha256_digests_are_not_secrets() -> None:
    data = example_data()
    data["aileron"]["lock"] = {
        "contentHash": "sha256:" + "ab12" * 16,
        "resolvedImages": [{"ref": "x:1", "digest": "r.io/x@sha256:" + "9f" * 32}],
    }
    assert lint_document(document(data)) == []


def test_instruction_only_skill_has_nothing_to_lint() -> None:
    assert lint_document(document({"name": "x", "description": "y"})) == []


def test_lint_diagnostics_are_located_when_the_document_has_positions(tmp_path: Any) -> None:
    from flightdeck.documents import parse_document

    text = (
        "---\nname: p\ndescription: d\naileron:\n  inputs: []\n  outputs: []\n"
        "  steps:\n    - id: a\n      kind: transform\n      bindings:\n"
        "        x: inputs.nope\n      outputs: [o]\n---\nbody\n"
    )
    path = tmp_path / "SKILL.md"
    path.write_text(text)
    result = parse_document(text, path=path)
    assert result.document is not None
    (diag,) = [d for d in lint_document(result.document) if d.code == "flightplan.unknown_input"]
    assert (diag.file, diag.line, diag.column) == (str(path), 11, 9)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_keys = st.sampled_from(
    ["requires", "environment", "inputs", "outputs", "steps", "lock", "schemaVersion"]
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_keys, _json), st.sampled_from(["steps", "inputs", "outputs"]), _json)
def test_lint_never_crashes_on_schema_invalid_data(
    block: dict[str, Any], key: str, junk: Any
) -> None:
    data = example_data()
    data["aileron"].update(block)
    _assert_located_diagnostics(lint_document(document(data)))
    data = example_data()
    data["aileron"][key] = [junk, {"id": junk, "name": junk, "kind": junk, "bindings": junk}]
    _assert_located_diagnostics(lint_document(document(data)))


def _assert_located_diagnostics(found: list[Any]) -> None:
    """Not crashing is not enough: whatever lint says must be a coded diagnostic."""
    assert isinstance(found, list)
    for diagnostic in found:
        assert isinstance(diagnostic.code, str) and diagnostic.code
        assert isinstance(diagnostic.message, str) and diagnostic.message
        assert isinstance(diagnostic.severity, Severity)
