"""The step graph of a run as inline SVG, each step coloured by its state.

Drawn here rather than through `flightdeck graph --format svg` because that
needs Graphviz, which a workstation may lack, and because the picture must
carry each step's live state. Layout: a step's column is the longest path
to it from a step with no dependency; rows keep declaration order.
"""

from __future__ import annotations

from html import escape

from flightdeck.flightplan import FlightPlan, StepGraph

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 200, 46, 50, 18, 10
COLOURS = {
    "completed": "#d4f7d4",
    "failed": "#f9d0d0",
    "started": "#d6e6ff",
    "pending-approval": "#ffe9a8",
    "interrupted": "#eeeeee",
}


def _columns(graph: StepGraph) -> dict[str, int]:
    try:
        order = graph.topological_order()
    except ValueError:  # a cycle: one column per declaration, still readable
        return {step: n for n, step in enumerate(graph.order)}
    column = dict.fromkeys(order, 0)
    for step in order:
        for target in graph.successors[step]:
            column[target] = max(column[target], column[step] + 1)
    return column


def step_graph_svg(plan: FlightPlan, states: dict[str, str]) -> str:
    graph = StepGraph.of(plan)
    column = _columns(graph)
    rows: dict[int, int] = {}
    place: dict[str, tuple[int, int]] = {}
    for step in graph.order:
        col = column[step]
        row = rows.get(col, 0)
        rows[col] = row + 1
        place[step] = (PAD + col * (BOX_W + GAP_X), PAD + row * (BOX_H + GAP_Y))
    width = PAD * 2 + (max(column.values(), default=0) + 1) * (BOX_W + GAP_X) - GAP_X
    height = PAD * 2 + max(rows.values(), default=1) * (BOX_H + GAP_Y) - GAP_Y
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{width}"'
        f' height="{height}" viewBox="0 0 {width} {height}" role="img"'
        ' aria-label="step graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7"'
        ' markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
        "</defs>",
    ]
    for source, targets in graph.successors.items():
        x1, y1 = place[source]
        for target in targets:
            x2, y2 = place[target]
            parts.append(
                f'<line x1="{x1 + BOX_W}" y1="{y1 + BOX_H // 2}" x2="{x2}"'
                f' y2="{y2 + BOX_H // 2}" stroke="#555" marker-end="url(#arrow)"/>'
            )
    kinds = {step.id: step.kind or "?" for step in plan.steps}
    for step, (x, y) in place.items():
        state = states.get(step, "not started")
        fill = COLOURS.get(state, "#ffffff")
        parts.append(
            f'<g class="node" data-step="{escape(step)}" data-state="{escape(state)}">'
            f"<title>{escape(step)}: {escape(state)}</title>"
            f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="6" fill="{fill}"'
            ' stroke="#333"/>'
            f'<text x="{x + 8}" y="{y + 19}" font-size="13" font-weight="bold">'
            f"{escape(step[:26])}</text>"
            f'<text x="{x + 8}" y="{y + 37}" font-size="11">'
            f"{escape(kinds.get(step, '?'))} · {escape(state)}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)
