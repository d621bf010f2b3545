"""Root click group with lazily imported subcommands."""

from __future__ import annotations

import importlib
import sys

import click

from flightdeck._version import __version__

# command name -> "module:attribute". One line per command; each module owns
# one command or one command group. Modules are imported only when invoked.
_COMMANDS: dict[str, str] = {
    "agent": "flightdeck.cli.chat.agent:agent",
    "audit": "flightdeck.cli.run.audit:audit",
    "completion": "flightdeck.cli.completion:completion",
    "config": "flightdeck.cli.config:config",
    "call": "flightdeck.cli.call:call",
    "drivers": "flightdeck.cli.drivers:drivers",
    "sessions": "flightdeck.cli.chat.sessions:sessions",
    "validate": "flightdeck.cli.validate:validate",
    "inspect": "flightdeck.cli.inspect:inspect",
    "schema": "flightdeck.cli.schema:schema",
    "lint": "flightdeck.cli.plan.lint:lint",
    "lock": "flightdeck.cli.lock:lock",
    "graph": "flightdeck.cli.plan.graph:graph",
    "freeze": "flightdeck.cli.plan.freeze:freeze",
    "catalog": "flightdeck.cli.plan.catalog:catalog",
    "verify": "flightdeck.cli.plan.verify:verify",
    "sign": "flightdeck.cli.plan.sign:sign",
    "keys": "flightdeck.cli.plan.keys:keys",
    "keyring": "flightdeck.cli.plan.keyring:keyring",
    "skills": "flightdeck.cli.plan.skills:skills",
    "publish": "flightdeck.cli.plan.publish:publish",
    "install": "flightdeck.cli.plan.publish:install",
    "launch": "flightdeck.cli.run.launch:launch",
    "runs": "flightdeck.cli.run.runs:runs",
    "images": "flightdeck.cli.run.images:images",
    "ui": "flightdeck.cli.run.ui:ui",
    "worker": "flightdeck.cli.run.worker:worker",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="flightdeck")
def cli() -> None:
    """flightdeck: validate, inspect, freeze and run agent manifests.

    \b
    Examples:
      flightdeck validate examples/
      flightdeck validate --format json path/to/TOOL.md
      flightdeck schema action
    """


def main(argv: list[str] | None = None) -> None:
    """Console entry point. Usage errors exit 2 (click's convention)."""
    from flightdeck.cli._render import color_choice

    # The root context's `color` is inherited by every subcommand's, and
    # click.echo strips or keeps ANSI codes by it.
    cli.main(
        args=argv if argv is not None else sys.argv[1:],
        prog_name="flightdeck",
        color=color_choice(),
    )
