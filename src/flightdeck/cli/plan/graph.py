"""`flightdeck graph PATH`: draw a Flight Plan's step graph."""

from __future__ import annotations

from pathlib import Path

import click

from flightdeck.cli._render import fail, format_diagnostic
from flightdeck.flightplan import FlightPlanError, load_plan, render_graph


@click.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["mermaid", "dot", "svg", "json"]), default="mermaid"
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write to a file.")
def graph(path: Path, fmt: str, out: Path | None) -> None:
    """Print the step graph: inputs, steps by kind (the llm-seam marked),
    outputs, and binding edges. `svg` needs Graphviz's `dot`; `json` gives
    the nodes and edges as data.

    \b
    Examples:
      flightdeck graph SKILL.md
      flightdeck graph SKILL.md --format dot | dot -Tpng > plan.png
      flightdeck graph SKILL.md --format svg --out plan.svg
      flightdeck graph SKILL.md --format json
    """
    load = load_plan(path)
    if load.plan is None or not load.ok:
        # A TOOL.md or a broken plan still parses into an (empty) plan; drawing
        # it would look like success. `lint` reports the same diagnostics.
        if fmt == "json":
            invalid = FlightPlanError(
                "graph.invalid_plan",
                f"{path} is not a valid Flight Plan",
                hint=f"flightdeck lint {path}",
                diagnostics=tuple(load.diagnostics),
            )
            fail(invalid, fmt)
        click.echo(click.style(str(path), bold=True) + " is not a valid Flight Plan:", err=True)
        for diag in load.diagnostics:
            click.echo(format_diagnostic(diag), err=True)
        raise SystemExit(1)
    try:
        rendered = render_graph(load.plan, fmt)
    except FlightPlanError as exc:
        fail(exc, fmt)
    if out is not None:
        try:
            out.write_text(rendered, encoding="utf-8")
        except OSError as exc:
            click.echo(
                f"error: cannot write {out}: {exc.strerror or exc} [graph.unwritable]", err=True
            )
            raise SystemExit(1) from None
    else:
        click.echo(rendered, nl=False)
