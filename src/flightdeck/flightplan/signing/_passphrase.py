"""Where the passphrase of an encrypted private key comes from.

Three sources, most explicit first: a file descriptor the caller opened for
us (`--passphrase-fd N`: a pipe from a password manager leaves no trace in
the environment or the process list), `FLIGHTDECK_KEY_PASSPHRASE`, and a
prompt, which only the CLI can offer and only on a terminal.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from flightdeck.flightplan._errors import FlightPlanError

PASSPHRASE_ENV = "FLIGHTDECK_KEY_PASSPHRASE"
# A passphrase longer than this is not a passphrase: a descriptor pointing at
# a large file or a device would otherwise be read without end.
_MAX_BYTES = 64 * 1024

Passphrase = bytes | Callable[[], bytes | None] | None


def read_passphrase_fd(fd: int) -> bytes:
    """Read descriptor `fd` to its end (then close it) and return the
    passphrase without one trailing newline, as `echo` or a file adds."""
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
            size += len(chunk)
            if size > _MAX_BYTES:
                raise FlightPlanError(
                    "keys.passphrase_fd_unreadable",
                    f"file descriptor {fd} gave more than {_MAX_BYTES} bytes",
                    hint="pass a pipe or file holding only the passphrase",
                )
    except OSError as exc:
        raise FlightPlanError(
            "keys.passphrase_fd_unreadable",
            f"cannot read a passphrase from file descriptor {fd}: {exc.strerror or exc}",
            hint="open the descriptor for the command, e.g. --passphrase-fd 3 3<passfile",
        ) from None
    finally:
        with contextlib.suppress(OSError):  # already closed: nothing to release
            os.close(fd)
    phrase = b"".join(chunks)
    phrase = phrase.removesuffix(b"\n").removesuffix(b"\r")
    if not phrase:
        raise FlightPlanError(
            "keys.passphrase_empty",
            f"file descriptor {fd} gave an empty passphrase",
            hint="an empty passphrase encrypts nothing",
        )
    return phrase


def resolve_passphrase(given: Passphrase) -> bytes | None:
    """Bytes given, else the environment, else what the callback (a prompt)
    returns; None when no source has one. An empty value is no passphrase."""
    if isinstance(given, bytes):
        return given or None
    phrase = os.environ.get(PASSPHRASE_ENV, "")
    if phrase:
        return phrase.encode("utf-8")
    if given is not None:
        return given() or None
    return None
