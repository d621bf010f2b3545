"""Step graph: order, cycles, and rendering for review."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flightdeck.flightplan import (
    FlightPlanError,
    StepGraph,
    read_plan,
    render_dot,
    render_graph,
    render_mermaid,
)
from tests.flightplan._plans import chain_plan, example_data


def test_seed003_topological_order_breaks_ties_by_declaration_order() -> None:
    data = example_data()
    steps = data["aileron"]["steps"]
    steps.reverse()  # declared file_issue, summarize, render_csv, query_metrics
    order = StepGraph.of(read_plan(data)).topological_order()
    assert order == ("query_metrics", "render_csv", "summarize", "file_issue")


def test_independent_steps_keep_declaration_order() -> None:
    data, _ = chain_plan(2)
    data["aileron"]["steps"].append(
        {"id": "z", "kind": "transform", "bindings": {"a": "inputs.window_days"}, "outputs": ["o"]}
    )
    data["aileron"]["steps"].insert(
        0,
        {"id": "y", "kind": "transform", "bindings": {"a": "inputs.window_days"}, "outputs": ["o"]},
    )
    assert StepGraph.of(read_plan(data)).topological_order() == ("y", "s0", "s1", "z")


def test_topological_order_refuses_a_cycle() -> None:
    data, _ = chain_plan(3)
    data["aileron"]["steps"][0]["args"] = {"x": "steps.s2.out"}
    with pytest.raises(ValueError, match="cycle"):
        StepGraph.of(read_plan(data)).topological_order()


def test_long_chain_has_no_recursion_limit() -> None:
    data, _ = chain_plan(3000)
    graph = StepGraph.of(read_plan(data))
    assert graph.cycles() == []
    assert len(graph.topological_order()) == 3000


def test_mermaid_shows_inputs_steps_outputs_edges_and_marks_the_seam() -> None:
    text = render_mermaid(read_plan(example_data()))
    assert text.startswith("flowchart LR\n")
    assert 'i0[/"window_days (literal)"/]' in text
    assert 's2{{"summarize<br/>llm-seam: ⚠ reaches a model"}}' in text
    assert 's2 -->|"issue_body → body"| s3' in text
    assert 's1 -.->|"materializes"| o0' in text
    assert "class s2 llm" in text


def test_dot_is_a_digraph_with_the_seam_highlighted() -> None:
    text = render_dot(read_plan(example_data()))
    assert text.startswith('digraph "weekly-metrics-digest" {')
    assert "s2 [shape=hexagon" in text and "#c0392b" in text
    assert 'i0 -> s0 [label="window_days"];' in text
    assert 's3 -> o1 [label="materializes", style=dashed];' in text


def test_labels_with_quotes_are_escaped() -> None:
    data = example_data()
    data["aileron"]["outputs"][0]["mimeType"] = 'text/"csv"'
    assert 'text/\\"csv\\"' in render_dot(read_plan(data))
    assert "text/#quot;csv#quot;" in render_mermaid(read_plan(data))


@pytest.mark.skipif(
    shutil.which("dot") is None, reason="install Graphviz (apt-get install graphviz)"
)
def test_svg_through_graphviz() -> None:
    assert "<svg" in render_graph(read_plan(example_data()), "svg")


def test_svg_without_graphviz_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The real seam: a PATH on which no `dot` can be found (not a patched shutil.which).
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FlightPlanError) as caught:
        render_graph(read_plan(example_data()), "svg")
    assert caught.value.code == "graph.graphviz_missing"
    assert "Graphviz" in (caught.value.hint or "")
