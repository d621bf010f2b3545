"""`--passphrase-fd N` and the terminal prompt, for commands that open or
write an encrypted private key (freeze, sign, keys generate --encrypt)."""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from flightdeck.flightplan import read_passphrase_fd

passphrase_fd_option = click.option(
    "--passphrase-fd",
    "passphrase_fd",
    type=click.IntRange(min=0),
    metavar="N",
    help="Read the private key's passphrase from file descriptor N (to its end; one "
    "trailing newline dropped). Before FLIGHTDECK_KEY_PASSPHRASE and the prompt.",
)


def passphrase_source(
    fd: int | None, *, confirm: bool = False
) -> bytes | Callable[[], bytes | None] | None:
    """The descriptor's bytes, or a prompt to call only if the key needs one
    (and only on a terminal: a prompt on a pipe would read the caller's
    data as a passphrase). The environment variable sits between the two."""
    if fd is not None:
        return read_passphrase_fd(fd)
    if not sys.stdin.isatty():
        return None

    def ask() -> bytes | None:
        phrase = click.prompt("passphrase", hide_input=True, confirmation_prompt=confirm, err=True)
        return str(phrase).encode("utf-8") or None

    return ask
