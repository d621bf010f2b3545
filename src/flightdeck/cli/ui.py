"""`flightdeck ui`: serve the local web view of runs, approvals and audit."""

from __future__ import annotations

from pathlib import Path

import click

from flightdeck.cli._render import fail


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="0: a free port."
)
@click.option("--no-open", is_flag=True, help="Do not open a browser; just print the URL.")
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    help="Workspace for runs resumed from the page (default: as `launch --resume`).",
)
def ui(host: str, port: int, no_open: bool, workspace: Path | None) -> None:
    """A local web view of runs, approvals, audit records, frozen plans and
    agent sessions. Pending approvals can be decided on a run's page.

    \b
    The URL printed carries a secret token, new on every start; share it
    only with whom may approve steps. Listening on anything but a loopback
    address exposes the page to the network (still behind the token).
    Examples:
      flightdeck ui
      flightdeck ui --port 8765 --no-open
    """
    from flightdeck.config import data_dir
    from flightdeck.ui import UiConfig, UiError, serve

    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"warning: listening on {host}: reachable from the network", err=True)
    where = workspace.resolve() if workspace else None
    config = UiConfig(data=data_dir(), workspace=where, bound=host)
    try:
        serve(config, port, open_browser=not no_open, announce=click.echo)
    except UiError as exc:
        fail(exc, "text")
