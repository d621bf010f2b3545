"""`flightdeck completion bash|zsh|fish`: the shell completion script."""

from __future__ import annotations

import click

_INSTALL = {
    "bash": 'eval "$(flightdeck completion bash)"   # in ~/.bashrc',
    "zsh": 'eval "$(flightdeck completion zsh)"    # in ~/.zshrc',
    "fish": "flightdeck completion fish > ~/.config/fish/completions/flightdeck.fish",
}


@click.command()
@click.argument("shell", type=click.Choice(sorted(_INSTALL)))
def completion(shell: str) -> None:
    """Print the completion script for SHELL (commands, options, choices).

    \b
    Install:
      bash:  eval "$(flightdeck completion bash)"   # in ~/.bashrc
      zsh:   eval "$(flightdeck completion zsh)"    # in ~/.zshrc
      fish:  flightdeck completion fish > ~/.config/fish/completions/flightdeck.fish
    """
    from click.shell_completion import get_completion_class

    from flightdeck.cli._main import cli

    cls = get_completion_class(shell)
    assert cls is not None  # the Choice above admits only shells click supports
    # The same variable click's own `_FLIGHTDECK_COMPLETE=bash_source` uses, so
    # the script calls back into this program for each completion.
    script = cls(cli, {}, "flightdeck", "_FLIGHTDECK_COMPLETE").source()
    click.echo(script)
