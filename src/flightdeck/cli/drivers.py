"""`flightdeck drivers list|show`"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from flightdeck.documents import Diagnostic, DocumentKind, Severity, load_document
from flightdeck.drivers import DriverError, load_driver
from flightdeck.drivers._package import runnable_problem
from flightdeck.drivers._resolve import find_driver_file

_WS = click.option(
    "--workspace",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
)
_FMT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")


@click.group()
def drivers() -> None:
    """Drivers of a workspace (`.drivers/*/DRIVER.md`).

    \b
    Examples:
      flightdeck drivers list --workspace examples/drivers
      flightdeck drivers show textstats-local --workspace examples/drivers --format json
    """


def _row(file: Path) -> dict[str, Any]:
    loaded = load_document(file, kind=DocumentKind.DRIVER)
    data = loaded.document.data if loaded.document is not None else {}
    problem = runnable_problem(data) if data else None
    errors = [d for d in loaded.diagnostics if d.severity is Severity.ERROR]
    note = problem.message if problem else None
    if note is None and errors:  # unreadable, binary, not UTF-8, invalid
        note = f"{errors[0].message} [{errors[0].code}]"
    raw = data.get("implements")
    entries: list[Any] = raw if isinstance(raw, list) else []
    return {
        "id": data.get("id", file.parent.name),
        "kind": data.get("kind"),
        "package": data.get("package"),
        "package_manager": data.get("package_manager"),
        "tools": [e.get("tool") for e in entries if isinstance(e, dict)],
        "policy_tags": data.get("policy_tags", []),
        "runnable": problem is None and loaded.ok,
        "note": note,
        "path": str(file),
    }


@drivers.command("list")
@_WS
@_FMT
def list_drivers(workspace: Path, fmt: str) -> None:
    """List the workspace's drivers from their manifests (nothing is imported)."""
    rows = [_row(f) for f in sorted(workspace.glob(".drivers/*/DRIVER.md"))]
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo(f"no drivers in {workspace}/.drivers")
        return
    from flightdeck.cli._render import print_table

    print_table(
        ["runnable", "driver", "kind", "package", "policy tags"],
        [
            (
                "✓" if r["runnable"] else "✗",
                r["id"],
                r["kind"],
                r["package"],
                ",".join(r["policy_tags"] or []),
            )
            for r in rows
        ],
    )
    # Notes are whole sentences (why a driver cannot run): below the table,
    # where a narrow terminal does not cut them.
    for row in rows:
        if row["note"]:
            click.echo(f"{row['id']}: {row['note']}")


def _unloadable(workspace: Path, driver_id: str) -> tuple[Path, Diagnostic] | None:
    """`.drivers/<id>/` exists but its DRIVER.md cannot be read or parsed:
    say why, rather than that no such driver exists."""
    if "/" in driver_id or "\\" in driver_id or driver_id.startswith("."):
        return None
    folder = workspace / ".drivers" / driver_id
    if not folder.is_dir():
        return None
    file = folder / "DRIVER.md"
    loaded = load_document(file, kind=DocumentKind.DRIVER)
    errors = [d for d in loaded.diagnostics if d.severity is Severity.ERROR]
    return (file, errors[0]) if loaded.document is None and errors else None


def _show_error(code: str, message: str, fmt: str) -> NoReturn:
    if fmt == "json":
        click.echo(json.dumps({"error": {"code": code, "message": message}}, indent=2))
    else:
        click.echo(f"error: {message} [{code}]", err=True)
    sys.exit(1)


@drivers.command("show")
@click.argument("driver_id")
@_WS
@_FMT
def show(driver_id: str, workspace: Path, fmt: str) -> None:
    """Register one driver (imports its package) and show its bindings, or why it was refused."""
    file = find_driver_file(workspace, driver_id)
    if file is None:
        broken = _unloadable(workspace, driver_id)
        if broken is not None:
            path, diag = broken
            _show_error(diag.code, f"driver {driver_id}: {path}: {diag.message}", fmt)
        _show_error("no_driver", f"no driver with id {driver_id} in {workspace}/.drivers", fmt)
    try:
        driver = load_driver(file, workspace=workspace.resolve())
    except DriverError as exc:
        if fmt == "json":
            click.echo(json.dumps({"error": exc.to_dict()}, indent=2))
        else:
            click.echo(f"refused: {exc.code}: {exc.message}", err=True)
            for diag in getattr(exc, "diagnostics", ()):
                click.echo(f"  {diag.location}: {diag.code}: {diag.message}", err=True)
        sys.exit(1)
    info = driver.describe()
    if fmt == "json":
        click.echo(json.dumps(info, indent=2))
        return
    imp = info["import"] or {}
    click.echo(f"{info['id']} ({info['key']}): {info['package']} via {info['package_manager']}")
    click.echo(f"  import {imp.get('module')}: {imp.get('seconds', 0) * 1000:.1f} ms")
    for tool, binding in info["tools"].items():
        stream = " (streaming)" if binding["streaming"] else ""
        click.echo(
            f"  {tool} -> {binding['function_ref']}{stream}, extract {binding['result_extract']}"
        )
