"""Render the step graph for review: Mermaid, Graphviz DOT, SVG via `dot`, or JSON.

Inputs, steps (shaped by kind; the llm-seam drawn in red and labelled as the
one step that reaches a model), declared outputs, and an edge per binding.
Node ids are positional (`i0`, `s0`, `o0`) so any name renders safely.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass

from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan.model._models import FlightPlan, Step

FORMATS = ("mermaid", "dot", "svg", "json")
LLM_MARK = "⚠ reaches a model"


@dataclass(frozen=True)
class _Edge:
    source: str
    target: str
    label: str
    dashed: bool = False


def _step_label(step: Step) -> str:
    detail = {
        "action-call": step.action_ref or "",
        "tool": " ".join(step.command[:3]),
        "llm-seam": LLM_MARK,
    }.get(step.kind or "", "")
    return f"{step.id}\n{step.kind}" + (f": {detail}" if detail else "")


def _edges(plan: FlightPlan) -> list[_Edge]:
    inputs = {item.name: f"i{n}" for n, item in enumerate(plan.inputs)}
    steps = {step.id: f"s{n}" for n, step in reversed(list(enumerate(plan.steps)))}
    outputs = {item.name: f"o{n}" for n, item in enumerate(plan.outputs)}
    edges = []
    for n, step in enumerate(plan.steps):
        for key, binding in step.bindings().items():
            if binding.input is not None and binding.input in inputs:
                edges.append(_Edge(inputs[binding.input], f"s{n}", key))
            elif binding.step in steps:
                label = key if key == binding.output else f"{binding.output} → {key}"
                edges.append(_Edge(steps[binding.step], f"s{n}", label))
        if step.materializes_output in outputs:
            edges.append(_Edge(f"s{n}", outputs[step.materializes_output], "materializes", True))
    return edges


def render_mermaid(plan: FlightPlan) -> str:
    def text(value: str) -> str:
        return value.replace('"', "#quot;").replace("\n", "<br/>")

    lines = ["flowchart LR"]
    if plan.inputs:
        lines.append('  subgraph inputs["inputs"]')
        for n, item in enumerate(plan.inputs):
            rule = item.resolution.rule or "?"
            lines.append(f'    i{n}[/"{text(item.name)} ({rule})"/]')
        lines.append("  end")
    shapes = {"action-call": ('["', '"]'), "transform": ('("', '")'), "tool": ('[["', '"]]')}
    for n, step in enumerate(plan.steps):
        left, right = shapes.get(step.kind or "", ('{{"', '"}}'))
        lines.append(f"  s{n}{left}{text(_step_label(step))}{right}")
    if plan.outputs:
        lines.append('  subgraph outputs["outputs"]')
        for n, artifact in enumerate(plan.outputs):
            label = text(f"{artifact.name}\n{artifact.mime_type or ''}")
            lines.append(f'    o{n}[("{label}")]')
        lines.append("  end")
    for edge in _edges(plan):
        arrow = "-.->" if edge.dashed else "-->"
        lines.append(f'  {edge.source} {arrow}|"{text(edge.label)}"| {edge.target}')
    seams = [f"s{n}" for n, step in enumerate(plan.steps) if step.kind == "llm-seam"]
    lines.append("  classDef llm fill:#fde2e2,stroke:#c0392b,stroke-width:3px")
    if seams:
        lines.append(f"  class {','.join(seams)} llm")
    return "\n".join(lines) + "\n"


def render_dot(plan: FlightPlan) -> str:
    def q(value: str) -> str:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    title = plan.name or "flight plan"
    lines = [f"digraph {q(title)} {{", "  rankdir=LR;", '  node [fontname="Helvetica"];']
    lines.append('  subgraph cluster_inputs { label="inputs"; style=dashed;')
    for n, item in enumerate(plan.inputs):
        label = f"{item.name}\n({item.resolution.rule or '?'})"
        lines.append(f"    i{n} [shape=parallelogram, label={q(label)}];")
    lines.append("  }")
    shapes = {"action-call": "box", "transform": "box, style=rounded", "tool": "component"}
    for n, step in enumerate(plan.steps):
        if step.kind == "llm-seam":
            attrs = 'shape=hexagon, style="filled,bold", fillcolor="#fde2e2", color="#c0392b"'
        else:
            attrs = f"shape={shapes.get(step.kind or '', 'box')}"
        lines.append(f"  s{n} [{attrs}, label={q(_step_label(step))}];")
    lines.append('  subgraph cluster_outputs { label="outputs"; style=dashed;')
    for n, artifact in enumerate(plan.outputs):
        label = f"{artifact.name}\n{artifact.mime_type or ''}"
        lines.append(f"    o{n} [shape=note, label={q(label)}];")
    lines.append("  }")
    for edge in _edges(plan):
        style = ", style=dashed" if edge.dashed else ""
        lines.append(f"  {edge.source} -> {edge.target} [label={q(edge.label)}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_svg(plan: FlightPlan) -> str:
    dot = shutil.which("dot")
    if dot is None:
        raise FlightPlanError(
            "graph.graphviz_missing",
            "--format svg needs Graphviz's 'dot' program, which is not installed",
            hint="install Graphviz (e.g. apt-get install graphviz) or use --format dot|mermaid",
        )
    done = subprocess.run(
        [dot, "-Tsvg"], input=render_dot(plan), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise FlightPlanError("graph.graphviz_failed", f"dot failed: {done.stderr.strip()}")
    return done.stdout


def render_json(plan: FlightPlan) -> str:
    """The same nodes and edges as data, for scripts: `{"nodes": [...], "edges": [...]}`."""
    nodes: list[dict[str, object]] = [
        {"id": f"i{n}", "type": "input", "name": item.name, "rule": item.resolution.rule}
        for n, item in enumerate(plan.inputs)
    ]
    for n, step in enumerate(plan.steps):
        nodes.append(
            {
                "id": f"s{n}",
                "type": "step",
                "name": step.id,
                "kind": step.kind,
                "reaches_model": step.kind == "llm-seam",
            }
        )
    nodes += [
        {"id": f"o{n}", "type": "output", "name": item.name, "mime_type": item.mime_type}
        for n, item in enumerate(plan.outputs)
    ]
    edges = [
        {"source": e.source, "target": e.target, "label": e.label, "materializes": e.dashed}
        for e in _edges(plan)
    ]
    return json.dumps({"name": plan.name, "nodes": nodes, "edges": edges}, indent=2) + "\n"


def render_graph(plan: FlightPlan, fmt: str) -> str:
    """Render in one of `FORMATS`."""
    renderers = {
        "mermaid": render_mermaid,
        "dot": render_dot,
        "svg": render_svg,
        "json": render_json,
    }
    if fmt not in renderers:
        raise FlightPlanError("graph.unknown_format", f"unknown format '{fmt}'")
    return renderers[fmt](plan)
