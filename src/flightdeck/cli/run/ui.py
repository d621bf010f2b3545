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
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Another name the page may be opened by (the Host header); loopback names always.",
)
def ui(
    host: str, port: int, no_open: bool, workspace: Path | None, allow_hosts: tuple[str, ...]
) -> None:
    """A local web view of runs, approvals, audit records, frozen plans and
    agent sessions. Pending approvals can be decided on a run's page.

    \b
    The URL printed carries a secret token, new on every start; share it
    only with whom may approve steps. Listening on anything but a loopback
    address exposes the page to the network (still behind the token).
    Examples:
      flightdeck ui
      flightdeck ui --port 8765 --no-open
      flightdeck ui --host 0.0.0.0 --allow-host build-box.internal
    """
    from flightdeck.config import data_dir
    from flightdeck.ui import UiConfig, UiError, serve

    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"warning: listening on {host}: reachable from the network", err=True)
        if not allow_hosts and host in ("0.0.0.0", "::"):
            click.echo("  open it by a name given with --allow-host NAME", err=True)
    from flightdeck.config import ConfigError, StoreError, store_url

    try:
        shared = store_url()  # the page reads the PostgreSQL store when there is one
    except StoreError as exc:
        fail(exc, "text")
    except ConfigError as exc:
        click.echo(f"error: {exc.path}: {exc.message} [{exc.code}]", err=True)
        raise SystemExit(1) from None
    where = workspace.resolve() if workspace else None
    config = UiConfig(
        data=data_dir(), workspace=where, bound=host, extra_hosts=allow_hosts, store_url=shared
    )
    try:
        serve(config, port, open_browser=not no_open, announce=click.echo)
    except UiError as exc:
        fail(exc, "text")
